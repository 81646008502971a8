#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The frameworks' checks (tests/frameworks/*_check.py), each run by the
# same Python natively and through xcuda, and compared:
#
#   tests/frameworks/run-frameworks.sh BUILD [CHECK...]
#
# The xcuda run is a guest's: xcuda-run (every CUDA library the program
# loads is xcuda's), in a mount namespace without the GPU's device nodes
# or the driver's libraries (tests/cuda/as-guest.sh).  xcudad runs
# outside, with XCUDA_MATH_LIBS set to the directory of the cuBLAS the
# framework bundles, so that both runs use the same library.  Needs a GPU
# and the framework: without either, the check prints SKIP.  Last line:
# "N passed, N failed[, N skipped]".
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:?usage: $0 BUILD [CHECK...]}" && pwd)
shift
PY=${PYTHON:-python3}
OUT=${OUT:-$B/results/frameworks}
mkdir -p "$OUT"
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=(torch pynvml)

pass=0 fail=0 skip=0
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no GPU (nvidia-smi finds none): the framework checks" \
		"need one"
	echo "0 passed, 0 failed, ${#checks[@]} skipped"
	exit 0
fi
TMP=$(mktemp -d)
trap 'kill "$dpid" 2>/dev/null; rm -rf "$TMP"' EXIT
for c in "${checks[@]}"; do
	mod=$c
	if ! "$PY" -c "import $mod" >/dev/null 2>&1; then
		echo "SKIP $c ($PY has no $mod)"
		skip=$((skip + 1))
		continue
	fi
	libs=$("$PY" - "$mod" <<'PY'
import importlib, os, sys
m = importlib.import_module(sys.argv[1])
root = os.path.dirname(os.path.dirname(m.__file__))
d = os.path.join(root, 'nvidia', 'cu13', 'lib')
print(d if os.path.isdir(d) else '')
PY
)
	sock=$TMP/$c.sock
	XCUDA_MATH_LIBS=$libs "$B/bin/xcudad" --socket "$sock" --no-xen \
		>"$OUT/$c.xcudad.log" 2>&1 &
	dpid=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	(cd "$TMP" && timeout 600 "$PY" "$HERE/${c}_check.py") \
		>"$OUT/$c.native.out" 2>"$OUT/$c.native.err"
	echo "exit status: $?" >>"$OUT/$c.native.out"
	(cd "$TMP" && XCUDA_SOCKET=$sock timeout 600 \
		"$HERE/../cuda/as-guest.sh" "$B/bin/xcuda-run" \
		"$PY" "$HERE/${c}_check.py") \
		>"$OUT/$c.xcuda.out" 2>"$OUT/$c.xcuda.err"
	echo "exit status: $?" >>"$OUT/$c.xcuda.out"
	kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	if diff -u --label "$c (native)" --label "$c (xcuda)" \
		"$OUT/$c.native.out" "$OUT/$c.xcuda.out" >"$OUT/$c.diff"; then
		echo "PASS $c"
		pass=$((pass + 1))
	else
		echo "FAIL $c"
		sed 's/^/    /' "$OUT/$c.diff"
		tail -n 20 "$OUT/$c.xcuda.err" | sed 's/^/    xcuda stderr: /'
		fail=$((fail + 1))
	fi
done
echo "results in $OUT"
echo "$pass passed, $fail failed${skip:+, $skip skipped}"
[ "$fail" = 0 ]
