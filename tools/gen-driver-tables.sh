#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Tables of the guest's libcuda.so.1, from NVIDIA's headers:
#
#   tools/gen-driver-tables.sh CUDA_INCLUDE OUT_DIR
#
# OUT_DIR/cu_errors.inc  { value, "NAME" }, per CUresult of cuda.h
# OUT_DIR/cu_procs.inc   { "cuName", version, "symbol", per_thread }, per
#                        PFN_cuName_vVERSION[_ptds|_ptsz] typedef of
#                        cudaTypedefs.h: the k-th version of a name (in
#                        increasing order) is the symbol cuName (k = 0) or
#                        cuName_v(k+1); a per-thread typedef's symbol is
#                        that of the newest version at or below its own,
#                        with its suffix.  cuGetProcAddress reads it.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: ${0##*/} CUDA_INCLUDE OUT_DIR" >&2
	exit 2
fi
inc=$1 out=$2
mkdir -p "$out"

awk '
/^[ \t]*CUDA_(SUCCESS|ERROR_[A-Z0-9_]+)[ \t]*=[ \t]*[0-9]+/ {
	sub(/^[ \t]*/, "")
	split($0, f, /[ \t]*=[ \t]*/)
	v = f[2]
	sub(/[^0-9].*$/, "", v)
	printf "\t{ %s, \"%s\" },\n", v, f[1]
}' "$inc/cuda.h" > "$out/cu_errors.inc.tmp"
[ -s "$out/cu_errors.inc.tmp" ] || { echo "no CUresult in cuda.h" >&2; exit 1; }
mv "$out/cu_errors.inc.tmp" "$out/cu_errors.inc"

grep -o 'PFN_cu[A-Za-z0-9]*_v[0-9]*\(_pt[sd][sz]\)\?)' "$inc/cudaTypedefs.h" |
	sed 's/^PFN_//; s/)$//' | sort -u |
	awk '
{
	pt = ""
	if (match($0, /_pt[sd][sz]$/)) {
		pt = substr($0, RSTART)
		$0 = substr($0, 1, RSTART - 1)
	}
	n = split($0, p, "_v")
	ver = p[n]
	name = p[1]
	for (i = 2; i < n; i++)
		name = name "_v" p[i]
	if (pt == "")
		vers[name] = vers[name] " " ver
	else
		ptv[name, ver] = pt
	names[name] = 1
}
END {
	for (name in names) {
		k = split(vers[name], v, " ")
		# numeric sort of this name s versions
		for (i = 1; i <= k; i++)
			for (j = i + 1; j <= k; j++)
				if (v[j] + 0 < v[i] + 0) {
					t = v[i]; v[i] = v[j]; v[j] = t
				}
		for (i = 1; i <= k; i++) {
			sym[name, i] = i == 1 ? name : name "_v" i
			printf "\t{ \"%s\", %d, \"%s\", 0 },\n", name, v[i], \
			       sym[name, i]
		}
		for (key in ptv) {
			split(key, kk, SUBSEP)
			if (kk[1] != name)
				continue
			best = 0
			for (i = 1; i <= k; i++)
				if (v[i] + 0 <= kk[2] + 0)
					best = i
			if (best)
				printf "\t{ \"%s\", %d, \"%s%s\", 1 },\n", \
				       name, kk[2], sym[name, best], ptv[key]
		}
	}
}' | LC_ALL=C sort > "$out/cu_procs.inc.tmp"
[ -s "$out/cu_procs.inc.tmp" ] || { echo "no PFN_ in cudaTypedefs.h" >&2; exit 1; }
mv "$out/cu_procs.inc.tmp" "$out/cu_procs.inc"
