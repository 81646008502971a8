#!/usr/bin/env bash
# Installs what building and testing xcuda needs on Debian 12, once.
# Idempotent: it only calls apt-get when something is missing.
set -euo pipefail

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# shellcheck source=tools/need.sh
. "$(dirname "$0")/need.sh"
need build-essential command -v cc
need build-essential command -v make
need libxen-dev test -e /usr/include/xen/io/ring.h
need binutils command -v nm
need gawk command -v awk
need python3-clang-14 /usr/bin/python3 -c "import clang.cindex"
need libssl-dev test -e /usr/include/openssl/hmac.h
# The workers' seccomp filter (dom0-daemon/sandbox.c).
need libseccomp-dev test -e /usr/include/seccomp.h
# The fuzzers (tests/fuzz/): clang and its libFuzzer runtime.
need clang command -v clang
need libclang-rt-14-dev sh -c \
	'ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
need_install
if [ ! -x "$CUDA_HOME/bin/nvcc" ] || [ ! -e "$CUDA_HOME/lib64/libcudart.so.13" ]; then
	echo "deps: the CUDA 13 toolkit is needed at $CUDA_HOME (set CUDA_HOME);" \
		"Debian does not package CUDA 13" >&2
	exit 1
fi
