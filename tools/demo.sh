#!/usr/bin/env bash
# The main job: run a CUDA program through xcuda and show each hop it took.
#
#   tools/demo.sh BUILD_DIR
set -euo pipefail

B=${1:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
B=$(cd "$B" && pwd)
work=$(mktemp -d)
trap 'kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; rm -rf "$work"' EXIT
dpid=

mkdir -p "$B/demo"
"$CUDA_HOME/bin/nvcc" -cudart shared -O2 \
	-gencode arch=compute_75,code=sm_75 \
	-gencode arch=compute_90,code='[sm_90,compute_90]' \
	-Xlinker --enable-new-dtags -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" \
	-o "$B/demo/demo" tests/demo/demo.cu -ldl

sock=$work/xcudad.sock
"$B/bin/xcudad" --socket "$sock" -v >"$work/xcudad.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || { echo "demo: xcudad did not start:"; cat "$work/xcudad.log"; exit 1; }

echo "== the program, through xcuda"
set +e
LD_LIBRARY_PATH="$B/lib" XCUDA_SOCKET="$sock" "$B/demo/demo" | tee "$work/out"
rc=${PIPESTATUS[0]}
set -e
sleep 0.2
echo
echo "== the hops it took"
echo "  1. the program called $(sed -n 's/^libcudart: //p' "$work/out") (xcuda's guest library)"
echo "  2. which opened a session over the local transport: a memfd ring + arena,"
echo "     handshake on $sock"
wpid=$(sed -n 's/.*worker \([0-9]*\).*/\1/p' "$work/xcudad.log" | head -n 1)
echo "  3. xcudad (pid $dpid) forked worker ${wpid:-?} for it, which called the real"
echo "     $CUDA_HOME/lib64/libcudart.so.13"
if [ "$rc" -eq 0 ]; then
	echo "  4. on the GPU: $(sed -n 's/^device 0 of [0-9]*: //p' "$work/out")"
	echo
	echo "demo: the CUDA program ran on the GPU through xcudad"
else
	echo "  4. no GPU: the real runtime in the worker answered $(tail -n 1 "$work/out")"
	echo
	echo "demo: this host has no usable NVIDIA GPU. xcuda itself worked end to end"
	echo "(the error above came from the real CUDA runtime, through xcudad)."
	echo "To run the kernel, run 'make demo' on a host with an NVIDIA GPU and a"
	echo "driver for CUDA 13 (nvidia-smi must list the GPU)."
fi
echo
echo "== xcudad's log"
sed 's/^/  /' "$work/xcudad.log"
