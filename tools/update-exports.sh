#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Regenerates guest-lib/exports/libcudart.so.13.syms: every dynamic symbol
# that a libcudart.so.13 defines and exports, one per line, sorted (C
# locale), as
#
#   NAME VERSION                  a function
#   NAME VERSION object SIZE      a data object of SIZE bytes
#
# VERSION is the symbol's version node; a non-default (hidden) version is
# written @VERSION, an unversioned symbol -.  The version-node definition
# symbol itself (an absolute symbol named after its node) is left out.
#
#   tools/update-exports.sh [--print] [LIB]
#
# LIB defaults to ${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13.
# --print writes the list to stdout instead of the committed file (the
# exports test uses it on the library we build).
set -euo pipefail

me=${0##*/}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/guest-lib/exports/libcudart.so.13.syms
print=0

usage() {
	echo "usage: $me [--print] [LIB]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--print) print=1; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || usage
lib=${1:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13}

if [ ! -r "$lib" ]; then
	echo "$me: cannot read $lib" >&2
	exit 1
fi
command -v readelf >/dev/null || { echo "$me: readelf not found" >&2; exit 1; }

# The version nodes the library defines.
nodes=$(LC_ALL=C readelf -V -W "$lib" | LC_ALL=C awk '
	/^Version definition/ { d = 1; next }
	/^Version / { d = 0 }
	d && /Name: / { sub(/.*Name: /, ""); print $1 }' | LC_ALL=C sort -u)

# readelf -W columns: Num: Value Size Type Bind Vis Ndx Name[@[@]VERSION]
list=$(LC_ALL=C readelf --dyn-syms -W "$lib" | LC_ALL=C awk -v me="$me" \
	-v nodes="$nodes" '
	BEGIN {
		n = split(nodes, a, "\n")
		for (i = 1; i <= n; i++)
			node[a[i]] = 1
	}
	# readelf writes large sizes in hex; mawk will not read those.
	function num(s,	i, n) {
		if (s !~ /^0x/)
			return s + 0
		n = 0
		for (i = 3; i <= length(s); i++)
			n = n * 16 + index("0123456789abcdef",
					   tolower(substr(s, i, 1))) - 1
		return sprintf("%.0f", n)
	}
	$1 ~ /^[0-9]+:$/ && NF >= 8 {
		type = $4; bind = $5; ndx = $7; name = $8
		if (ndx == "UND" || bind == "LOCAL")
			next
		if (index(name, "@@")) {
			ver = substr(name, index(name, "@@") + 2)
			name = substr(name, 1, index(name, "@@") - 1)
		} else if (index(name, "@")) {
			ver = "@" substr(name, index(name, "@") + 1)
			name = substr(name, 1, index(name, "@") - 1)
		} else {
			ver = "-"
		}
		# The definition of a version node itself.
		if (ndx == "ABS" && (name in node))
			next
		if (type == "FUNC" || type == "IFUNC") {
			print name, ver
		} else if (type == "OBJECT") {
			print name, ver, "object", num($3)
		} else {
			printf "%s: %s: unsupported symbol type %s\n", me,
				name, type > "/dev/stderr"
			bad = 1
		}
	}
	END { exit bad }' | LC_ALL=C sort)

if [ -z "$list" ]; then
	echo "$me: $lib exports no symbols" >&2
	exit 1
fi

if [ "$print" = 1 ]; then
	printf '%s\n' "$list"
	exit 0
fi

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
printf '%s\n' "$list" > "$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "$me: $(wc -l < "$out") exports of $lib written to" \
	"${out#"$root"/}" >&2
