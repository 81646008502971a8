#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Checks the dynamic symbols of our libcudart.so.13 against the committed
# export list, and the list against the real runtime when it is installed;
# those of our other libraries (libcuda.so.1, libcublas.so.13,
# libcublasLt.so.13, libnvidia-ml.so.1, libcurand.so.10, libcufft.so.12)
# against theirs,
# and the private node of libcudart.so.13 against what they import from
# it.
#
#   tests/unit/exports-test.sh BUILD_DIR
#
# Prints PASS NAME or FAIL NAME: WHY per check (SKIP: WHY for a check that
# cannot run here), then "N passed, N failed[, N skipped]", and exits
# non-zero if any check failed.
set -euo pipefail

me=${0##*/}
root=$(cd "$(dirname "$0")/../.." && pwd)
list=$root/guest-lib/exports/libcudart.so.13.syms
dump=$root/tools/update-exports.sh

if [ $# -ne 1 ]; then
	echo "usage: $me BUILD_DIR" >&2
	exit 2
fi
ours=$1/lib/libcudart.so.13
real=${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

npass=0 nfail=0 nskip=0
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() {
	local n=$1
	shift
	echo "FAIL $n: $*"
	failed=1
	nfail=$((nfail + 1))
}

# Explains how list $2 (what LIB exports) differs from the committed $1.
explain() {
	LC_ALL=C awk '
	function add(kind, s) {
		if (cnt[kind]++ < 5)
			ex[kind] = ex[kind] (cnt[kind] > 1 ? ", " : "") s
	}
	FNR == NR { want[$1] = $0; wver[$1] = $2; next }
	{
		got[$1] = 1
		if (!($1 in want))
			add("unlisted", $1)
		else if (want[$1] != $0)
			add("other version", $1 "@" $2 " not @" wver[$1])
	}
	END {
		for (s in want)
			if (!(s in got))
				add("not exported", s)
		sep = ""
		n = split("not exported,unlisted,other version", k, ",")
		for (i = 1; i <= n; i++) {
			if (!cnt[k[i]])
				continue
			more = (cnt[k[i]] > 5) ? ", ..." : ""
			printf "%s%d %s: %s%s", sep, cnt[k[i]], k[i],
			       ex[k[i]], more
			sep = "; "
		}
		if (sep == "")
			printf "same symbols, different lines"
	}' "$1" "$2"
}

# The committed list itself: well formed, sorted, one line per name.
why=
if [ ! -s "$list" ]; then
	why="${list#"$root"/} is missing or empty"
elif bad=$(LC_ALL=C awk '!(NF == 2 || (NF == 4 && $3 == "object" &&
	   $4 ~ /^[0-9]+$/)) { print FNR; exit }' "$list") && [ -n "$bad" ]; then
	why="line $bad is not NAME VERSION [object SIZE]"
elif ! LC_ALL=C sort -c "$list" 2>/dev/null; then
	why="not sorted (LC_ALL=C sort)"
elif dup=$(awk '{ print $1 }' "$list" | LC_ALL=C sort | uniq -d |
	   head -n 1) && [ -n "$dup" ]; then
	why="$dup is listed twice"
fi
if [ -n "$why" ]; then
	fail exports-list "$why"
else
	pass exports-list
fi

# (a) Our library exports exactly the list, each name under its node,
# besides the private node that xcuda's libcuda.so.1 alone uses.
if [ ! -f "$ours" ]; then
	fail exports-build "$ours not found"
elif ! "$dump" --print "$ours" > "$tmp/all" 2> "$tmp/err"; then
	fail exports-build "cannot read its symbols: $(head -n 1 "$tmp/err")"
elif ! grep -v ' XCUDA_PRIVATE_1$' "$tmp/all" > "$tmp/ours" ||
	! cmp -s "$list" "$tmp/ours"; then
	fail exports-build "$(explain "$list" "$tmp/ours")"
else
	pass exports-build
fi

# (a'') Each of xcuda's other libraries exports exactly its list's
# functions (NVIDIA's version node, if any, is checked by its name).
others=(libcuda.so.1 libcublas.so.13 libcublasLt.so.13 libnvidia-ml.so.1
	libcurand.so.10 libcufft.so.12)
for lib in "${others[@]}"; do
	f=${ours%/*}/$lib
	if [ ! -f "$f" ]; then
		fail "exports-$lib" "$f not found"
		continue
	fi
	LC_ALL=C nm -D --defined-only "$f" |
		awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' |
		LC_ALL=C sort > "$tmp/lib-ours"
	grep -v '^#' "$root/guest-lib/exports/$lib.syms" | LC_ALL=C sort \
		> "$tmp/lib-list"
	if cmp -s "$tmp/lib-ours" "$tmp/lib-list"; then
		pass "exports-$lib"
	else
		fail "exports-$lib" "$(diff "$tmp/lib-list" "$tmp/lib-ours" |
			grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	fi
done

# (a') The private node holds what those libraries import, no more.
if [ -f "$ours" ]; then
	grep ' XCUDA_PRIVATE_1$' "$tmp/all" | awk '{print $1}' > "$tmp/priv"
	for lib in "${others[@]}"; do
		[ -f "${ours%/*}/$lib" ] &&
			LC_ALL=C nm -D --undefined-only "${ours%/*}/$lib"
	done | awk '$2 ~ /^xc_/ {sub(/@.*/, "", $2); print $2}' |
		LC_ALL=C sort -u > "$tmp/used"
	if cmp -s "$tmp/priv" "$tmp/used" && [ -s "$tmp/used" ]; then
		pass private-node
	else
		fail private-node "XCUDA_PRIVATE_1 is not what the other" \
			"libraries import: $(diff "$tmp/priv" "$tmp/used" |
			grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	fi
fi

if [ -f "$ours" ]; then
	soname=$(LC_ALL=C readelf -d "$ours" |
		 sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
	if [ "$soname" = libcudart.so.13 ]; then
		pass soname-build
	else
		fail soname-build "soname is '${soname:-none}'," \
			"not libcudart.so.13"
	fi
fi

# (b) The list is what the real runtime exports.
if [ ! -f "$real" ]; then
	echo "SKIP: real libcudart.so.13 not installed"
	nskip=$((nskip + 1))
elif ! "$dump" --print "$real" > "$tmp/real" 2> "$tmp/err"; then
	fail exports-real "cannot read $real: $(head -n 1 "$tmp/err")"
elif ! cmp -s "$list" "$tmp/real"; then
	fail exports-real "$(explain "$list" "$tmp/real");" \
		"run tools/update-exports.sh"
else
	pass exports-real
fi

if [ "$nskip" -gt 0 ]; then
	echo "$npass passed, $nfail failed, $nskip skipped"
else
	echo "$npass passed, $nfail failed"
fi
exit "$failed"
