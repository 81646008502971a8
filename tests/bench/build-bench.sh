#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds xcuda-bench into BUILD_DIR/bench/xcuda-bench:
#
#   tests/bench/build-bench.sh BUILD_DIR
#
# The runtime is a shared library found through RUNPATH natively, so that
# LD_LIBRARY_PATH puts xcuda's in its place.  Environment: NVCC,
# CUDA_HOME.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
mkdir -p "$1/bench"
"$NVCC" -O2 -std=c++17 -cudart shared \
	-gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90 \
	-gencode arch=compute_75,code=sm_75 \
	-Xlinker --enable-new-dtags -Xlinker -rpath -Xlinker "$CUDA_HOME/lib64" \
	-o "$1/bench/xcuda-bench" "$HERE/xcuda-bench.cu" -lcublas
