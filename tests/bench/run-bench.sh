#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs xcuda-bench natively and through xcuda (local transport) in one
# go, on the same GPU, and pairs the two:
#
#   tests/bench/run-bench.sh BUILD_DIR [xcuda-bench options: --smoke,
#                            --reps N, --only GROUP,...]
#
# Where python3 has PyTorch, its MLP training speed (torch_bench.py) is
# measured the same two ways (BENCH_TORCH=0: not).
# Writes to $OUT if set, else BUILD_DIR/results/bench: native.csv,
# xcuda.csv, bench.csv (metric,size_bytes,unit,native,xcuda,ratio with
# ratio = xcuda / native) and bench.txt (the same as a table), and prints
# the table.  Plots: tests/bench/plot.sh on bench.csv.  Environment:
# NVCC, CUDA_HOME; XCUDA_* (passed to the xcuda run: XCUDA_SPIN_US,
# XCUDA_CHUNK_KB, ...).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [--smoke] [--reps N] [--only GROUP,...]" >&2; exit 2; }
B=$(cd "$1" && pwd)
shift
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
RES=${OUT:-$B/results/bench}
BIN=$B/bench/xcuda-bench
mkdir -p "$RES" "$B/bench"

"$NVCC" -O2 -std=c++17 -cudart shared \
	-gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90 \
	-gencode arch=compute_75,code=sm_75 \
	-Xlinker --enable-new-dtags -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" \
	-o "$BIN" "$HERE/xcuda-bench.cu" -lcublas

tmp=$(mktemp -d)
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT
env -u LD_LIBRARY_PATH "$B/bin/xcudad" --socket "$tmp/s.sock" --no-xen \
	>"$RES/xcudad.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && break; sleep 0.05; done

set +e
env -u LD_LIBRARY_PATH "$BIN" "$@" >"$RES/native.csv" 2>"$RES/native.err"
nrc=$?
# Through xcuda the program sees the host as a guest does, where it can.
guest=()
"$HERE/../cuda/as-guest.sh" --check && guest=("$HERE/../cuda/as-guest.sh")
env LD_LIBRARY_PATH="$B/lib" XCUDA_SOCKET="$tmp/s.sock" \
	${guest[@]+"${guest[@]}"} "$BIN" "$@" \
	>"$RES/xcuda.csv" 2>"$RES/xcuda.err"
xrc=$?
# PyTorch's training steps, where python3 has torch (not for --smoke, nor
# for --only without torch):
# natively, then through xcuda-run as a guest, with a daemon whose
# cuBLAS is the one PyTorch bundles.
if [[ " $* " != *" --smoke "* ]] && [ "$nrc" -eq 0 ] &&
	{ [[ " $* " != *" --only "* ]] || [[ "$*" == *torch* ]]; } &&
	[ "${BENCH_TORCH:-1}" = 1 ] && python3 -c 'import torch' 2>/dev/null; then
	tlibs=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "cu13", "lib"))')
	XCUDA_MATH_LIBS=$tlibs env -u LD_LIBRARY_PATH "$B/bin/xcudad" \
		--socket "$tmp/t.sock" --no-xen >>"$RES/xcudad.log" 2>&1 &
	tpid=$!
	for _ in $(seq 100); do [ -S "$tmp/t.sock" ] && break; sleep 0.05; done
	env -u LD_LIBRARY_PATH python3 "$HERE/torch_bench.py" >>"$RES/native.csv" \
		2>>"$RES/native.err"
	env XCUDA_SOCKET="$tmp/t.sock" ${guest[@]+"${guest[@]}"} \
		"$B/bin/xcuda-run" python3 "$HERE/torch_bench.py" \
		>>"$RES/xcuda.csv" 2>>"$RES/xcuda.err"
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
fi
set -e
# The worker's CPU: xcudad has reaped it once the session is over.
for _ in $(seq 100); do pgrep -P "$dpid" >/dev/null || break; sleep 0.05; done
wcpu=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($14 + $15) / hz }' \
	"/proc/$dpid/stat" 2>/dev/null || echo "?")
if [ "$nrc" -ne 0 ] || [ "$xrc" -ne 0 ]; then
	echo "xcuda-bench: native exit $nrc ($(tail -n 1 "$RES/native.err"))," \
		"xcuda exit $xrc ($(tail -n 1 "$RES/xcuda.err"))"
	# Without a GPU both must fail the same way; that is all a smoke
	# run on a CPU machine can check.
	[ "$nrc" -eq "$xrc" ] && [ "$(tail -n 1 "$RES/native.err")" = \
		"$(tail -n 1 "$RES/xcuda.err")" ] && exit 3
	exit 1
fi

awk -F, '
NR == FNR { if (FNR > 1) nat[$1 "," $2] = $3; next }
FNR == 1 { print "metric,size_bytes,unit,native,xcuda,ratio"; next }
{
	k = $1 "," $2
	if (!(k in nat) || nat[k] == 0) { bad = 1; next }
	printf "%s,%s,%s,%s,%s,%.3f\n", $1, $2, $4, nat[k], $3, $3 / nat[k]
}
END { exit bad }' "$RES/native.csv" "$RES/xcuda.csv" >"$RES/bench.csv"

awk -F, '
function human(n) {
	if (n == 0) return "-"
	if (n >= 1048576) return n / 1048576 "M"
	if (n >= 1024) return n / 1024 "K"
	return n
}
NR == 1 {
	printf "%-14s %6s %5s %12s %12s %8s  %s\n", "metric", "size", "unit",
	       "native", "xcuda", "x/n", "better"
	next
}
{
	better = ($3 ~ /\/s$/) ? "higher" : "lower"
	printf "%-14s %6s %5s %12.4g %12.4g %8.3f  %s\n", $1, human($2), $3,
	       $4, $5, $6, better
}' "$RES/bench.csv" | tee "$RES/bench.txt"
{
	echo "cpu: the application process; the xcuda worker used $wcpu s more"
	echo "(medians of each row's repetitions; ratio = xcuda / native; $(date -u +%FT%TZ))"
} | tee -a "$RES/bench.txt"
