#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Tests of the call description and its generator (tools/gen-calls.py):
# typed handlers and requests that do not match their command do not
# compile, malformed descriptions are refused with a reason, and the
# stamp spares libclang a second run.
#
#   tests/unit/gen-calls-test.sh BUILD
set -uo pipefail

B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
PYTHON=${PYTHON:-/usr/bin/python3}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# NVML's header, where the build found it (Makefile's NVML_INCLUDE).
if [ -z "${NVML_INCLUDE:-}" ]; then
	NVML_INCLUDE=$CUDA_HOME/include
	[ -e "$NVML_INCLUDE/nvml.h" ] || NVML_INCLUDE=$B/deps/nvml
fi
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

cflags=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -Iinclude
	-I"$B/gen/include" -I"$CUDA_HOME/include" -I"$NVML_INCLUDE"
	-DNVML_NO_UNVERSIONED_FUNC_DEFS -fsyntax-only)

# $1 name, $2 expect (ok|fail), $3 pattern the error must show, $4 source,
# $5 include dir of the source's kind.
compiles() {
	local name=$1 expect=$2 pat=$3 src=$4 dir=$5 out rc
	printf '%s\n' "$src" >"$tmp/$name.c"
	out=$("$CC" "${cflags[@]}" -I"$dir" -c "$tmp/$name.c" 2>&1)
	rc=$?
	if [ "$expect" = ok ]; then
		if [ $rc -eq 0 ]; then ok "$name"; else ko "$name" "$out"; fi
	elif [ $rc -ne 0 ] && grep -q -- "$pat" <<<"$out"; then
		ok "$name"
	else
		ko "$name" "expected an error matching '$pat', got rc $rc: $out"
	fi
}

# A worker handler must take its own command's structures.
handler='#include "ops.h"
int xd_op_malloc(struct xd_session *s, const struct xcuda_%s_args *a,
		 struct xcuda_malloc_res *r, struct xd_call *call)
{
	(void)s; (void)a; (void)r; (void)call;
	return 0;
}'
# shellcheck disable=SC2059
compiles handler-right-struct ok '' "$(printf "$handler" malloc)" dom0-daemon
# shellcheck disable=SC2059
compiles handler-wrong-struct fail 'conflicting types' \
	"$(printf "$handler" free)" dom0-daemon

# A guest round trip must be given its own command's structures.
guest='#include "guest.h"
cudaError_t t(void);
cudaError_t t(void)
{
	struct xcuda_%s_args a = { 0 };
	struct xcuda_malloc_res r;

	return xc_call_malloc(&a, &r);
}'
# shellcheck disable=SC2059
compiles guest-right-struct ok '' "$(printf "$guest" malloc)" guest-lib
# shellcheck disable=SC2059
compiles guest-wrong-struct fail 'incompatible pointer type' \
	"$(printf "$guest" free)" guest-lib

# Malformed descriptions: each is refused, and says why.
refuses() {
	local name=$1 pat=$2 out
	printf '%s\n' "$3" >"$tmp/$name.calls"
	out=$("$PYTHON" tools/gen-calls.py code --out "$tmp/out-$name" \
		--cuda-include "$CUDA_HOME/include" "$tmp/$name.calls" 2>&1)
	if [ $? -ne 0 ] && grep -q -- "$pat" <<<"$out"; then
		ok "spec-$name"
	else
		ko "spec-$name" "expected a refusal matching '$pat': $out"
	fi
}
refuses dup-opcode 'opcode 5 is already A' 'call A 5
	impl hand
	| a
call B 5
	impl hand
	| b'
refuses transport-range 'outside 1..0xfeff' 'call A 65281
	impl hand
	| a'
refuses no-doc 'has no documentation' 'call A 5
	impl hand'
refuses unknown-key 'unknown key "colour"' 'call A 5
	colour red
	| a'
refuses unannotated-pointer 'is a pointer: annotate it' 'header cuda_runtime_api.h
call A 5
	entry cudaDeviceGetLimit
	| a'
refuses bad-annotation 'unknown annotation "sideways"' 'header cuda_runtime_api.h
call A 5
	entry cudaDeviceGetLimit
	param pValue sideways
	| a'
# A set named by index: both ends' mappings, declared once.
refuses index-usage 'index CTYPE guest=PREFIX worker=PREFIX' 'index nvmlDevice_t guest=xc_nvml_dev'
refuses index-twice 'nvmlDevice_t is declared twice' 'index nvmlDevice_t guest=a worker=b
index nvmlDevice_t guest=c worker=d'
# A scalar placed by a pointer mode is a math library's, typed or sized.
refuses scalar-not-library 'scalar and result are pointers of a library' 'header cuda_runtime_api.h
call A 5
	entry cudaDeviceGetLimit
	param pValue scalar
	| a'
refuses scalar-void-untyped 'a void \* scalar names the parameters' 'header cublas_api.h
call A 5
	flags cublas
	entry cublasScalEx
	param alpha scalar
	| a'
refuses scalar-no-such-type 'alpha(bogus) names no parameter' 'header cublas_api.h
call A 5
	flags cublas
	entry cublasScalEx
	param alpha scalar(bogus)
	| a'
refuses library-prefix 'a cuBLAS call.s entries are cublas\* functions' 'header cublasLt.h
call A 5
	flags cublas
	entry cublasLtMatmulPreferenceCreate
	| a'
refuses no-such-param 'has no parameter bogus' 'header cuda_runtime_api.h
call A 5
	entry cudaDeviceGetLimit
	param pValue out
	param bogus out
	| a'
refuses field-doc-nowhere 'field bogus names no field' 'call A 5
	impl hand
	args a:u64
	field bogus what
	| a'
refuses field-doc-ambiguous 'both the arguments and the result' 'call A 5
	impl hand
	args a:u64
	result a:u64
	field a what
	| a'
refuses unaligned 'is not aligned' 'call A 5
	impl hand
	args a:u32 b:u64 c:u32
	| a'
refuses too-big 'more than the 224' 'call A 5
	impl hand
	args a:u64[29]
	| a'
refuses postable-result 'a postable call has no results' 'header cuda_runtime_api.h
call A 5
	flags postable
	entry cudaDeviceGetLimit
	param pValue out
	| a'
refuses capturesync-alone 'capturesync is for postable calls' 'call A 5
	flags capturesync
	impl hand
	args a:u64
	| a'
refuses variant-prototype "does not share" 'header cuda_runtime_api.h
call A 5
	entry cudaDeviceGetLimit cudaDeviceSetLimit
	param pValue out
	| a'
refuses handle-unknown-word 'handle KIND CTYPE destroy=FUNCTION' \
	'handle array cudaArray_t destroy=cudaFreeArray sideways'
refuses handle-bad-order 'handle KIND CTYPE destroy=FUNCTION' \
	'handle array cudaArray_t destroy=cudaFreeArray order=soon'
refuses handle-value-alias 'a value handle has no alias' \
	'handle tex cudaTextureObject_t destroy=f alias=cudaArray_t value'
refuses handle-alias-twice 'is declared twice' \
	'handle array cudaArray_t destroy=cudaFreeArray alias=cudaArray_const_t
handle carray cudaArray_const_t destroy=cudaFreeArray'
refuses value-handle-nullable 'travels like any other' \
	'header cuda_runtime_api.h
handle tex cudaTextureObject_t destroy=cudaDestroyTextureObject value
call A 5
	entry cudaDestroyTextureObject
	param texObject destroy nullable
	| a'
refuses value-handle-borrowed 'never borrowed' 'header cuda_runtime_api.h
handle surf cudaSurfaceObject_t destroy=cudaDestroySurfaceObject value
call A 5
	entry cudaCreateSurfaceObject
	param pSurfObject out borrowed
	param pResDesc in
	| a'
refuses struct-by-value-out 'is passed by value' 'header cuda_runtime_api.h
call A 5
	entry cudaMemset3D
	param extent out
	| a'

# A structure by value travels as it is; a value handle as its value.
cat >"$tmp/value.calls" <<'SPEC'
header cuda_runtime_api.h
handle tex cudaTextureObject_t destroy=cudaDestroyTextureObject value
handle array cudaArray_t destroy=cudaFreeArray alias=cudaArray_const_t
call MEMSET_3D 5
	entry cudaMemset3D
	| a
call DESTROY_TEX 6
	entry cudaDestroyTextureObject
	param texObject destroy
	| b
call GET_CHANNEL_DESC 7
	entry cudaGetChannelDesc
	param desc out
	| c
SPEC
"$PYTHON" tools/gen-calls.py code --out "$tmp/out-value" \
	--cuda-include "$CUDA_HOME/include" "$tmp/value.calls" >/dev/null 2>&1
gh=$tmp/out-value/include/xcuda/calls.h
gw=$tmp/out-value/dom0-daemon/dispatch.c
if grep -q 'struct cudaExtent extent;' "$gh" &&
	grep -q 'struct cudaPitchedPtr pitchedDevPtr;' "$gh" &&
	grep -q 'uint64_t texObject;' "$gh" &&
	grep -q 'xd_value_find(&s->objects\[XD_H_TEX\], a->texObject)' "$gw" &&
	grep -q 'cudaArray_const_t array = NULL;' "$gw" &&
	grep -q '(cudaTextureObject_t)v);' "$gw"; then
	ok "value-structs-and-handles"
else
	ko "value-structs-and-handles" "unexpected generated code in $tmp/out-value"
fi
# The worker side compiles (the guest's needs the protocol's own calls).
if "$CC" -I"$tmp/out-value/include" "${cflags[@]}" -Idom0-daemon -c "$gw" \
	2>"$tmp/value.err"; then
	ok "value-worker-compiles"
else
	ko "value-worker-compiles" "$(cat "$tmp/value.err")"
fi

# The stamp: a second run with the same inputs writes nothing.
spec=(spec/*.calls)
"$PYTHON" tools/gen-calls.py code --out "$tmp/gen" \
	--cuda-include "$CUDA_HOME/include" --cuda-include "$NVML_INCLUDE" \
	"${spec[@]}" >/dev/null 2>&1
before=$(stat -c %Y.%N "$tmp/gen/guest-lib/entries.c" 2>/dev/null)
sleep 1
if PYTHONPATH=/nonexistent "$PYTHON" -S tools/gen-calls.py code \
	--out "$tmp/gen" "${spec[@]}" 2>/dev/null &&
	[ "$before" = "$(stat -c %Y.%N "$tmp/gen/guest-lib/entries.c")" ]; then
	ok "stamp-skips-libclang"
else
	ko "stamp-skips-libclang" "the second run did work or needed libclang"
fi
# ... and what it generated is what the build compiled.
if diff -r -x stamp "$tmp/gen" "$B/gen" -x docs -x '*.o' -x '*.d' >/dev/null; then
	ok "generated-matches-build"
else
	ko "generated-matches-build" "$B/gen differs from a fresh generation"
fi

# Generated code reads like the code beside it: 80 columns.
long=$(find "$B/gen" -name '*.[ch]' -exec awk '{ gsub(/\t/, "        ") }
	length($0) > 80 { print FILENAME ":" FNR }' {} +)
if [ -z "$long" ]; then ok "generated-fits-80-columns"
else ko "generated-fits-80-columns" "$long"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
