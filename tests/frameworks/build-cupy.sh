#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds CuPy from its unmodified sdist against the CUDA runtime's shared
# library, so that it runs on xcuda:
#
#   tests/frameworks/build-cupy.sh SDIST DEST
#
#   SDIST  cupy-X.Y.Z.tar.gz (pip download --no-deps --no-binary cupy
#          cupy==X.Y.Z)
#   DEST   a directory for pip's --target: use it with PYTHONPATH=DEST
#
# Why: CuPy's wheels (cupy-cuda13x) link NVIDIA's CUDA runtime statically
# (libcudart_static.a) into cupy_backends/cuda/api/runtime, cupy/cuda/cub,
# cupy/cuda/thrust, cupy/random/_generator_api and cupy/cuda/jitify.  The
# static runtime talks to the driver through the driver's private export
# tables (cuGetExportTable), which xcuda's libcuda.so.1 cannot provide,
# so those modules cannot run in a guest.  Built against libcudart.so.13,
# they call the runtime's public API, which xcuda's libcudart.so.13
# forwards like any program's.
#
# What it changes: nothing of CuPy's.  CuPy's build names the static
# runtime as an extra object, $CUDA_PATH/lib64/libcudart_static.a
# (install/cupy_builder/_features.py, static_libraries).  CUDA_PATH here
# is a shim toolkit, DEST/.cuda-shim: symlinks to everything of
# $CUDA_HOME, except that its lib64/libcudart_static.a is a GNU ld linker
# script, INPUT($CUDA_HOME/lib64/libcudart.so), so that the linker records
# DT_NEEDED libcudart.so.13 instead of copying the static runtime in.  The
# shim stays in DEST: the modules' RPATH names its lib64, whose links lead
# to the toolkit's libraries (and to xcuda's, under xcuda-run, whose
# loader audit answers every search for a CUDA library).
#
# No network: pip runs with --no-index --no-build-isolation, with this
# Python's Cython, setuptools and numpy, or the Cython and
# setuptools wheels found beside SDIST where this Python's are missing or
# too old for the sdist (Cython 3.2.x, setuptools >= 77).
#
# Environment: PYTHON (python3), CUDA_HOME (/usr/local/cuda),
# CUPY_NVCC_GENERATE_CODE (arch=compute_90,code=sm_90: the GPU's
# architecture only, which keeps the build short), CUPY_NUM_BUILD_JOBS
# ($(nproc)).  After the build, every extension module under DEST is
# checked for a static runtime (a defined cudaGetExportTable or
# __cudaRegisterFatBinary: the wheel's five modules have both), and the
# five modules for DT_NEEDED libcudart.so.13; exit status 1 if a check
# fails.  "build-cupy.sh --check DEST" only checks (an unpacked wheel
# fails it).
set -euo pipefail

usage() { echo "usage: $0 SDIST DEST | --check DEST" >&2; exit 2; }
die() { echo "build-cupy: $*" >&2; exit 1; }

# The checks, of the modules under $1.
check() {
	local d=$1 so m fail=0 n=0
	while IFS= read -r -d '' so; do
		n=$((n + 1))
		# A defined (not UND) symbol of the static runtime's.
		if readelf -sW "$so" | awk '$7 != "UND" && ($8 == \
		    "cudaGetExportTable" || $8 == "__cudaRegisterFatBinary") {
			found = 1 } END { exit !found }'; then
			echo "FAIL: ${so#"$d"/} contains a static CUDA runtime" >&2
			fail=1
		fi
	done < <(find "$d/cupy" "$d/cupy_backends" "$d/cupyx" -name '*.so' \
		-print0 2>/dev/null)
	[ "$n" -gt 0 ] || die "no extension modules under $d"
	for m in cupy_backends/cuda/api/runtime cupy/cuda/cub cupy/cuda/thrust \
		 cupy/random/_generator_api cupy/cuda/jitify; do
		so=$(ls "$d/$m".*.so 2>/dev/null | head -n 1) || true
		if [ -z "$so" ]; then
			echo "FAIL: no $m extension module" >&2
			fail=1
		elif ! readelf -dW "$so" |
			grep -q 'NEEDED.*\[libcudart\.so\.13\]'; then
			echo "FAIL: $m does not need libcudart.so.13" >&2
			fail=1
		fi
	done
	[ "$fail" = 0 ] || die "CuPy in $d is not linked as xcuda needs"
	echo "build-cupy: OK: $n extension modules, no static CUDA runtime;" \
		"runtime, cub, thrust, _generator_api and jitify need" \
		"libcudart.so.13"
}

[ $# -eq 2 ] || usage
if [ "$1" = --check ]; then
	check "$(cd "$2" && pwd)"
	exit
fi
SDIST=$(readlink -f "$1")
[ -f "$SDIST" ] || { echo "$0: no sdist $1" >&2; exit 2; }
mkdir -p "$2"
DEST=$(cd "$2" && pwd)
PY=${PYTHON:-python3}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CUDA_HOME=$(readlink -f "$CUDA_HOME")
WHEELS=$(dirname "$SDIST")
export CUPY_NVCC_GENERATE_CODE=${CUPY_NVCC_GENERATE_CODE:-arch=compute_90,code=sm_90}
export CUPY_NUM_BUILD_JOBS=${CUPY_NUM_BUILD_JOBS:-$(nproc)}

[ -x "$CUDA_HOME/bin/nvcc" ] || die "no nvcc in $CUDA_HOME/bin (set CUDA_HOME)"
LIB=$(readlink -f "$CUDA_HOME/lib64")
CUDART=$LIB/libcudart.so
[ -e "$CUDART" ] ||
	CUDART=$(ls "$LIB"/libcudart.so.[0-9]* 2>/dev/null | head -n 1) || true
[ -e "$CUDART" ] || die "no libcudart.so in $LIB"

# The shim toolkit.
SHIM=$DEST/.cuda-shim
rm -rf "$SHIM"
mkdir -p "$SHIM/lib64"
for f in "$CUDA_HOME"/*; do
	case ${f##*/} in lib64) continue ;; esac
	if [ "${f##*/}" = lib ] && [ "$(readlink -f "$f")" = "$LIB" ]; then
		ln -s lib64 "$SHIM/lib"	# lib64 -> lib in some toolkits
		continue
	fi
	ln -s "$f" "$SHIM/${f##*/}"
done
for f in "$LIB"/*; do
	[ "${f##*/}" = libcudart_static.a ] && continue
	ln -s "$f" "$SHIM/lib64/${f##*/}"
done
cat >"$SHIM/lib64/libcudart_static.a" <<EOF
/* xcuda (tests/frameworks/build-cupy.sh): CuPy's build links
   libcudart_static.a; this makes it link the shared runtime. */
INPUT($CUDART)
EOF

# The build tools: this Python's, or the wheels beside the sdist.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
tools=()
"$PY" - <<'PY' || tools+=(cython)
import Cython
v = tuple(int(x) for x in Cython.__version__.split('.')[:2])
assert (3, 2) <= v < (3, 3), Cython.__version__
PY
"$PY" - <<'PY' || tools+=(setuptools)
import setuptools
assert int(setuptools.__version__.split('.')[0]) >= 77
PY
"$PY" -c 'import numpy' || die "$PY has no numpy"
if [ ${#tools[@]} -gt 0 ]; then
	whls=()
	for t in "${tools[@]}"; do
		w=$(ls "$WHEELS/$t"-*.whl 2>/dev/null | head -n 1) ||
			true
		[ -n "$w" ] || die "$PY has no suitable $t and $WHEELS" \
			"has no $t wheel"
		whls+=("$w")
	done
	echo "build-cupy: build tools from $WHEELS: ${whls[*]##*/}"
	"$PY" -m pip install -q --no-index --no-deps --target "$WORK/tools" \
		"${whls[@]}"
	export PYTHONPATH=$WORK/tools${PYTHONPATH:+:$PYTHONPATH}
	export PATH=$WORK/tools/bin:$PATH
fi

# The toolkit has no libcuda.so unless a driver is installed: jitify
# links -lcuda, so the stub (DT_NEEDED libcuda.so.1 all the same) is the
# last place the linker looks.
[ -d "$LIB/stubs" ] &&
	export LIBRARY_PATH=${LIBRARY_PATH:+$LIBRARY_PATH:}$LIB/stubs
export CUDA_PATH=$SHIM
export PATH=$SHIM/bin:$PATH
unset CUPY_INSTALL_USE_HIP || true
echo "build-cupy: CUDA_PATH=$SHIM, CUPY_NVCC_GENERATE_CODE=$CUPY_NVCC_GENERATE_CODE," \
	"CUPY_NUM_BUILD_JOBS=$CUPY_NUM_BUILD_JOBS"
start=$(date +%s)
(cd "$WORK" && "$PY" -m pip wheel -v --no-index --no-build-isolation \
	--no-deps -w "$WORK/wheel" "$SDIST") >"$DEST/.build-cupy.log" 2>&1 ||
	{ tail -n 40 "$DEST/.build-cupy.log"; die "the build failed:" \
		"$DEST/.build-cupy.log"; }
"$PY" -m pip install -q --no-index --no-deps --upgrade --target "$DEST" \
	"$WORK"/wheel/cupy-*.whl
echo "build-cupy: built in $(( $(date +%s) - start )) s; log in" \
	"$DEST/.build-cupy.log"

check "$DEST"
echo "use: PYTHONPATH=$DEST $PY -c 'import cupy'"
