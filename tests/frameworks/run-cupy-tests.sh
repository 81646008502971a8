#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A subset of CuPy's own test suite, natively and through xcuda, compared
# test by test:
#
#   tests/frameworks/run-cupy-tests.sh BUILD CUPY_SRC [RUN...]
#
#   BUILD     xcuda's build directory (bin/xcudad, bin/xcuda-run)
#   CUPY_SRC  CuPy's source tree at the built version (the directory
#             holding pyproject.toml and tests/), or its sdist
#             (cupy-X.Y.Z.tar.gz, which has both)
#   RUN       native, xcuda, compare (default: all three, in that order;
#             name them one at a time to split the work between commands)
#
# The CuPy tested is the one built against the shared runtime by
# tests/frameworks/build-cupy.sh, in $CUPY_DIR (default BUILD/cupy), put
# first on PYTHONPATH.  The xcuda run is a guest's: xcuda-run under
# tests/cuda/as-guest.sh, with xcudad outside, whose XCUDA_MATH_LIBS is
# the directory of the cuBLAS that CuPy loads natively (cuda-pathfinder's
# choice), so that both runs use the same library.  pytest runs with
# CuPy's pytest configuration (its pyproject.toml), -m "not slow and not
# multi_gpu", and pytest-xdist's -n $JOBS where it is installed (default
# 8; JOBS=0: serially); each run's output and JUnit XML are saved under
# $OUT (default BUILD/results/cupy-tests), each test's outcome on its
# own line as it ends (-v).  A run is interrupted after $RUN_TIMEOUT
# seconds (default 1200), as ^C would: pytest then still lists the
# failures and writes the XML of the tests that ran.  CuPy's kernel cache
# (CUPY_CACHE_DIR) is $OUT/kernel-cache, shared by both runs.
#
# The summary: per run, passed, failed, skipped and error counts; then
# the tests whose outcome differs between the runs.  Last line: "N passed,
# N failed", a test passing when both runs had the same outcome.  Exit
# status 0 when none differs.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 BUILD CUPY_SRC [native|xcuda|compare...]" >&2
	exit 2; }
[ $# -ge 2 ] || usage
B=$(cd "$1" && pwd) || usage
SRC=$2
shift 2
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(native xcuda compare)
PY=${PYTHON:-python3}
OUT=${OUT:-$B/results/cupy-tests}
CUPY_DIR=${CUPY_DIR:-$B/cupy}
JOBS=${JOBS:-8}
RUN_TIMEOUT=${RUN_TIMEOUT:-1200}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# The subset: CuPy's core (elementwise operations, reductions, user
# kernels, RawKernel and RawModule with NVRTC and Jitify), creation,
# sorting (Thrust), the random generator (CuPy's own kernels), matmul
# (cuBLAS), FFTs (cuFFT), streams, events, memory and the runtime's API.
TESTS=(
	tests/cupy_tests/core_tests/test_ndarray_elementwise_op.py
	tests/cupy_tests/core_tests/test_ndarray_reduction.py
	tests/cupy_tests/core_tests/test_elementwise.py
	tests/cupy_tests/core_tests/test_reduction.py
	tests/cupy_tests/core_tests/test_userkernel.py
	tests/cupy_tests/core_tests/test_raw.py
	tests/cupy_tests/creation_tests/test_ranges.py
	tests/cupy_tests/sorting_tests/test_sort.py
	tests/cupy_tests/random_tests/test_generator_api.py
	tests/cupy_tests/math_tests/test_matmul.py
	tests/cupy_tests/fft_tests/test_fft.py
	tests/cupy_tests/cuda_tests/test_stream.py
	tests/cupy_tests/cuda_tests/test_memory.py
	tests/cupy_tests/cuda_tests/test_runtime.py
)

TMP=$(mktemp -d)
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$TMP"' EXIT

# CuPy's pyproject.toml and tests/, alone: pytest must import the built
# CuPy, not the source tree's.
mkdir -p "$TMP/src"
if [ -f "$SRC" ]; then
	tar xzf "$SRC" -C "$TMP/src" --strip-components=1 --wildcards \
		'*/pyproject.toml' '*/tests/*' ||
		{ echo "$0: cannot unpack $SRC" >&2; exit 2; }
elif [ -f "$SRC/pyproject.toml" ] && [ -d "$SRC/tests" ]; then
	cp -r "$SRC/pyproject.toml" "$SRC/tests" "$TMP/src/"
elif [ -f "$SRC/../pyproject.toml" ] && [ -d "$SRC/cupy_tests" ]; then
	cp -r "$SRC/../pyproject.toml" "$SRC" "$TMP/src/"
else
	echo "$0: $SRC is neither CuPy's source tree nor its sdist" >&2
	exit 2
fi
# CUPY_TESTS (space-separated paths) runs those instead.
if [ -n "${CUPY_TESTS:-}" ]; then
	read -ra TESTS <<<"$CUPY_TESTS"
fi
for t in "${TESTS[@]}"; do
	[ -f "$TMP/src/$t" ] || { echo "$0: no $t in $SRC" >&2; exit 2; }
done

export PYTHONPATH=$CUPY_DIR${PYTHONPATH:+:$PYTHONPATH}
export CUPY_CACHE_DIR=$OUT/kernel-cache
case " ${runs[*]} " in *" native "* | *" xcuda "*) ;; *) tested=no ;; esac
if [ "${tested:-}" = no ]; then
	:	# compare only
elif ! (cd "$TMP" && "$PY" -c 'import cupy') >/dev/null 2>&1; then
	echo "SKIP: $PY cannot import cupy from $CUPY_DIR" \
		"(tests/frameworks/build-cupy.sh builds it)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
[ "${tested:-}" = no ] ||
	case $(cd "$TMP" && "$PY" -c 'import cupy; print(cupy.__file__)') in
	"$CUPY_DIR"/*) ;;
	*)	echo "$0: cupy is not imported from $CUPY_DIR" >&2; exit 2 ;;
	esac
xdist=()
if [ "$JOBS" != 0 ] && "$PY" -c 'import xdist' 2>/dev/null; then
	xdist=(-p xdist -n "$JOBS")
fi

# pytest, in $TMP/src, with the command's prefix (empty natively).
run_pytest() {
	local name=$1
	shift
	local t0=$SECONDS
	(cd "$TMP/src" && "$@" timeout -s INT -k 30 "$RUN_TIMEOUT" \
		"$PY" -m pytest -v -rfE --tb=line -p no:cacheprovider \
		"${xdist[@]}" -c pyproject.toml --rootdir . \
		-m 'not slow and not multi_gpu' \
		--junitxml="$OUT/$name.xml" -o junit_family=xunit2 \
		"${TESTS[@]}") >"$OUT/$name.out" 2>&1
	local rc=$?
	echo "exit status: $rc ($((SECONDS - t0)) s)" >>"$OUT/$name.out"
	echo "$name: exit status $rc in $((SECONDS - t0)) s; $(tail -n 2 \
		"$OUT/$name.out" | head -n 1)"
	[ "$rc" = 124 ] && echo "$name: stopped after $RUN_TIMEOUT s" \
		"(RUN_TIMEOUT): its XML holds the tests that ended"
	return 0
}

for r in "${runs[@]}"; do
	case $r in
	native)
		rm -f "$OUT/native.xml"
		if ! nvidia-smi -L >/dev/null 2>&1; then
			echo "SKIP native: no GPU (nvidia-smi finds none)"
			continue
		fi
		run_pytest native env
		;;
	xcuda)
		rm -f "$OUT/xcuda.xml"
		if ! nvidia-smi -L >/dev/null 2>&1; then
			echo "SKIP xcuda: no GPU (nvidia-smi finds none)"
			continue
		fi
		# The directory of the cuBLAS CuPy loads natively.
		libs=$(cd "$TMP" && "$PY" - 2>/dev/null <<'PY'
import os
from cuda.pathfinder import load_nvidia_dynamic_lib
p = load_nvidia_dynamic_lib('cublas').abs_path
print(os.path.dirname(p) if p else '')
PY
) || libs=
		echo "xcuda: XCUDA_MATH_LIBS=${libs:-(empty: xcudad searches)}"
		sock=$TMP/xcuda.sock
		XCUDA_MATH_LIBS=$libs "$B/bin/xcudad" --socket "$sock" \
			--no-xen >"$OUT/xcudad.log" 2>&1 &
		dpid=$!
		for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
		run_pytest xcuda env XCUDA_SOCKET="$sock" \
			"$HERE/../cuda/as-guest.sh" "$B/bin/xcuda-run"
		kill "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
		dpid=
		;;
	compare)
		"$PY" - "$OUT" <<'PY'
import os
import sys
import xml.etree.ElementTree as ET

out = sys.argv[1]
results = {}
for run in ('native', 'xcuda'):
    path = os.path.join(out, run + '.xml')
    if not os.path.exists(path):
        print('%s: no %s (the run did not finish)' % (run, path))
        results[run] = None
        continue
    tests = {}
    for case in ET.parse(path).getroot().iter('testcase'):
        tid = '%s::%s' % (case.get('classname', ''), case.get('name', ''))
        kind = 'passed'
        for child in case:
            if child.tag in ('failure', 'error', 'skipped'):
                kind = {'failure': 'failed'}.get(child.tag, child.tag)
                break
        # A test can fail in its call and error in its teardown.
        if tests.get(tid) in ('failed', 'error'):
            continue
        tests[tid] = kind
    results[run] = tests
    counts = {k: 0 for k in ('passed', 'failed', 'skipped', 'error')}
    for k in tests.values():
        counts[k] += 1
    print('%s: %d passed, %d failed, %d skipped, %d error' % (
        run, counts['passed'], counts['failed'], counts['skipped'],
        counts['error']))
nat, xc = results['native'], results['xcuda']
if nat is None or xc is None:
    print('0 passed, 1 failed')
    sys.exit(1)
same = differ = 0
diffs = []
for tid in sorted(set(nat) | set(xc)):
    a, b = nat.get(tid, 'missing'), xc.get(tid, 'missing')
    if a == b:
        same += 1
    else:
        differ += 1
        diffs.append('  %s: native %s, xcuda %s' % (tid, a, b))
print('tests whose outcome differs: %d' % differ)
for d in diffs:
    print(d)
print('results in %s' % out)
print('%d passed, %d failed' % (same, differ))
sys.exit(1 if differ else 0)
PY
		exit $?
		;;
	*)	usage ;;
	esac
done
exit 0
