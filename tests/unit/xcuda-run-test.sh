#!/bin/bash
# SPDX-License-Identifier: MIT
#
# xcuda-run, without a GPU: a program that loads a bundled copy of the
# CUDA runtime by its absolute path (as PyTorch loads nvidia/cu13/lib),
# or the runtime and the driver by their sonames, gets xcuda's files;
# other libraries load as they are; without xcuda-run nothing changes.
#
#   tests/unit/xcuda-run-test.sh BUILD_DIR
#
# Prints PASS/FAIL per check, then "N passed, N failed".
set -u

B=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
real=${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npass=0 nfail=0
check() {
	if [ "$2" = "$3" ]; then
		echo "PASS $1"
		npass=$((npass + 1))
	else
		echo "FAIL $1: got '$2', want '$3'"
		nfail=$((nfail + 1))
	fi
}

# Prints the file that defines SYMBOL once LIB is dlopen'ed.
cat > "$tmp/which.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	Dl_info info;
	void *s;

	if (argc != 3 || !h) {
		printf("dlopen failed\n");
		return 1;
	}
	s = dlsym(h, argv[2]);
	if (!s || !dladdr(s, &info)) {
		printf("no symbol\n");
		return 1;
	}
	printf("%s\n", info.dli_fname);
	return 0;
}
C
cc -o "$tmp/which" "$tmp/which.c" -ldl || exit 2
mkdir -p "$tmp/site/nvidia/cu13/lib"
bundled=$tmp/site/nvidia/cu13/lib/libcudart.so.13
if [ -f "$real" ]; then
	cp "$real" "$bundled"
else
	# Any library will do as the bundled copy: it is never loaded.
	cp "$B/lib/libcudart.so.13" "$bundled"
fi
run="$B/bin/xcuda-run"

got=$("$tmp/which" "$bundled" cudaGetDeviceCount)
check "without xcuda-run, the bundled copy loads" "$got" "$bundled"
got=$("$run" "$tmp/which" "$bundled" cudaGetDeviceCount)
check "a bundled runtime by absolute path is xcuda's" "$got" \
	"$B/lib/libcudart.so.13"
got=$("$run" "$tmp/which" libcudart.so.13 cudaMalloc)
check "the runtime by soname is xcuda's" "$got" "$B/lib/libcudart.so.13"
got=$("$run" "$tmp/which" libcuda.so.1 cuInit)
check "the driver by soname is xcuda's" "$got" "$B/lib/libcuda.so.1"
got=$("$run" "$tmp/which" /usr/lib/x86_64-linux-gnu/libcuda.so.1 cuInit)
check "the driver by a path of the host's is xcuda's" "$got" \
	"$B/lib/libcuda.so.1"
got=$("$run" "$tmp/which" libcublas.so.13 cublasCreate_v2)
check "cuBLAS by soname is xcuda's" "$got" "$B/lib/libcublas.so.13"
got=$("$run" "$tmp/which" libcublasLt.so.13 cublasLtMatmul)
check "cuBLASLt by soname is xcuda's" "$got" "$B/lib/libcublasLt.so.13"
got=$("$run" "$tmp/which" libnvidia-ml.so.1 nvmlInit_v2)
check "NVML by soname is xcuda's" "$got" "$B/lib/libnvidia-ml.so.1"
got=$("$run" "$tmp/which" /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 \
	nvmlInit_v2)
check "NVML by a path of the host's is xcuda's" "$got" \
	"$B/lib/libnvidia-ml.so.1"
got=$("$run" "$tmp/which" libcurand.so.10 curandCreateGenerator)
check "cuRAND by soname is xcuda's" "$got" "$B/lib/libcurand.so.10"
# A framework's bundled cuBLAS and cuRAND, by absolute path (PyTorch's).
cp "$B/lib/libcurand.so.10" "$tmp/site/nvidia/cu13/lib/"
got=$("$run" "$tmp/which" "$tmp/site/nvidia/cu13/lib/libcurand.so.10" \
	curandGenerateUniform)
check "a bundled cuRAND by absolute path is xcuda's" "$got" \
	"$B/lib/libcurand.so.10"
cp "$B/lib/libcublasLt.so.13" "$tmp/site/nvidia/cu13/lib/"
got=$("$run" "$tmp/which" "$tmp/site/nvidia/cu13/lib/libcublasLt.so.13" \
	cublasLtMatmul)
check "a bundled cuBLASLt by absolute path is xcuda's" "$got" \
	"$B/lib/libcublasLt.so.13"
cp "$bundled" "$tmp/site/nvidia/cu13/lib/libcudart.so.12"
got=$("$run" "$tmp/which" "$tmp/site/nvidia/cu13/lib/libcudart.so.12" \
	cudaGetDeviceCount)
check "another major version is not ours" "$got" \
	"$tmp/site/nvidia/cu13/lib/libcudart.so.12"
got=$("$run" "$tmp/which" libm.so.6 cos)
check "other libraries load as they are" "${got##*/}" "libm.so.6"
"$run" >/dev/null 2>&1
check "no command: usage, status 2" "$?" 2
echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ]
