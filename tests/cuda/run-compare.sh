#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Run every CUDA test program natively and through xcuda, and compare.
#
#   tests/cuda/run-compare.sh [--gpu|--cpu] BUILD [PROGRAM...]
#
#   --gpu    (default) needs an NVIDIA GPU: without one (nvidia-smi -L finds
#            none) print "SKIP: no GPU ..." and exit 0.
#   --cpu    run the same comparison on any machine.  Without a GPU every
#            program fails at its first CUDA call, and must fail the same
#            way through xcuda (this is what CI runs).
#   BUILD    the build directory: BUILD/lib/libcudart.so.13 (xcuda's
#            runtime) and BUILD/bin/xcudad (the daemon).  The programs are
#            built into BUILD/tests/cuda.
#   PROGRAM  run only these (default: all, in the Makefile's order).
#
# For each program: the native run (LD_LIBRARY_PATH unset: the binaries'
# RUNPATH finds the real libcudart), then the xcuda run
# (LD_LIBRARY_PATH=BUILD/lib, XCUDA_SOCKET=<tmp>/xcudad.sock), each under
# `timeout $XCUDA_TEST_TIMEOUT` (default 120 s).  stdout and the exit status
# must be identical; stderr is saved, not compared.  Prints PASS/FAIL/SKIP
# per program (a diff for a FAIL) and last "N passed, N failed[, N skipped]";
# exits 1 if any failed, 2 if it could not run at all.
#
# The daemon, BUILD/bin/xcudad --socket <tmp>/xcudad.sock, is
# started first (with the real runtime: LD_LIBRARY_PATH unset), the script
# waits for the socket to appear, restarts it if it dies during a program,
# and kills it on exit.  A program during which the daemon dies FAILs.
#
# Results (each program's NAME.native.out/.err, NAME.xcuda.out/.err,
# NAME.diff for failures, xcudad.log, summary.txt) go to $OUT if set, else
# to BUILD/results/cuda.
#
# With XCUDA_COMPARE_UPSTREAM=1 the xcuda runs go through the upstream
# link: that daemon is a relay (--upstream 127.0.0.1:PORT), and a second
# one, started first with the real runtime, is the GPU server (--listen
# 127.0.0.1:PORT, a fresh key; its log is xcudad-server.log).  PORT is
# XCUDA_COMPARE_PORT (default 17701).
#
# Environment: NVCC, CUDA_HOME (passed on to make), XCUDA_TEST_TIMEOUT,
# XCUDA_SKIP (space-separated program names to skip), OUT,
# XCUDA_COMPARE_UPSTREAM, XCUDA_COMPARE_PORT.

set -u

usage() {
	echo "usage: $0 [--gpu|--cpu] BUILD [PROGRAM...]" >&2
	exit 2
}

mode=gpu
case "${1:-}" in
--gpu) mode=gpu; shift ;;
--cpu) mode=cpu; shift ;;
-h | --help) usage ;;
esac
[ $# -ge 1 ] || usage
BUILD=$1
shift
[ -d "$BUILD" ] || { echo "$0: $BUILD: no such directory" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)

HERE=$(cd "$(dirname "$0")" && pwd)
TIMEOUT=${XCUDA_TEST_TIMEOUT:-120}
RESULTS=${OUT:-$BUILD/results/cuda}
BIN=$BUILD/tests/cuda
XCUDAD=$BUILD/bin/xcudad
XLIB=$BUILD/lib

if [ "$mode" = gpu ]; then
	if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
		echo "SKIP: no GPU (check-gpu needs an NVIDIA GPU)"
		exit 0
	fi
fi

# On a GPU host the xcuda runs see the host as a DomU does: no device
# nodes, no driver libraries (as-guest.sh); the daemon runs outside.
GUEST=()
if [ "$mode" = gpu ]; then
	if "$HERE/as-guest.sh" --check; then
		GUEST=("$HERE/as-guest.sh")
		echo "xcuda runs: as a guest (no /dev/nvidia*, no libcuda)"
	else
		echo "warning: cannot hide the GPU from the xcuda runs" \
			"(needs root and unshare)" >&2
	fi
fi

if [ ! -x "$XCUDAD" ]; then
	echo "$0: $XCUDAD is missing (build xcuda first)" >&2
	exit 2
fi
if [ ! -e "$XLIB/libcudart.so.13" ]; then
	echo "warning: $XLIB/libcudart.so.13 is missing:" \
		"the xcuda runs will load the native runtime" >&2
fi

# The build.  OUT is passed explicitly: the caller's $OUT is the results
# directory, not the binaries'.
if ! make -s -j"$(nproc 2>/dev/null || echo 2)" -C "$HERE" OUT="$BIN" \
	>"$BUILD/tests-cuda-build.log" 2>&1; then
	cat "$BUILD/tests-cuda-build.log" >&2
	echo "$0: building the CUDA test programs failed" >&2
	exit 2
fi
if [ $# -gt 0 ]; then
	programs=("$@")
else
	mapfile -t programs < <(make -s -C "$HERE" OUT="$BIN" list)
fi
for p in "${programs[@]}"; do
	[ -x "$BIN/$p" ] || { echo "$0: no program $p" >&2; exit 2; }
done

mkdir -p "$RESULTS" || exit 2
RESULTS=$(cd "$RESULTS" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xcuda-compare.XXXXXX") || exit 2
SOCK=$TMP/xcudad.sock
LOG=$RESULTS/xcudad.log
: >"$LOG"
daemon_pid=
server_pid=
UP_ARGS=()

stop_server() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
		server_pid=
	fi
}

stop_daemon() {
	if [ -n "$daemon_pid" ]; then
		kill "$daemon_pid" 2>/dev/null
		# give it a moment to exit cleanly, then insist
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$daemon_pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
		daemon_pid=
	fi
}

cleanup() {
	stop_daemon
	stop_server
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A dead child stays a zombie until waited for, and kill -0 succeeds on a
# zombie: look at its state too.
daemon_alive() {
	local st
	[ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null || return 1
	st=$(sed 's/.*) //' "/proc/$daemon_pid/stat" 2>/dev/null | cut -c1)
	[ "$st" != Z ]
}

# The GPU server of XCUDA_COMPARE_UPSTREAM, and the relay's options.
start_server() {
	local port=${XCUDA_COMPARE_PORT:-17701} key=$TMP/link.key
	head -c 48 /dev/urandom >"$key" && chmod 600 "$key" || return 1
	env -u LD_LIBRARY_PATH "$XCUDAD" --socket "$TMP/server.sock" \
		--listen "127.0.0.1:$port" --key "$key" \
		>>"$RESULTS/xcudad-server.log" 2>&1 </dev/null &
	server_pid=$!
	for _ in $(seq 300); do
		grep -q "listening for relays" "$RESULTS/xcudad-server.log" &&
			break
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "listening for relays" "$RESULTS/xcudad-server.log"; then
		echo "$0: the GPU server did not start; its log:" >&2
		tail -n 30 "$RESULTS/xcudad-server.log" >&2
		return 1
	fi
	UP_ARGS=(--upstream "127.0.0.1:$port" --key "$key")
	echo "xcuda runs: through the upstream link (127.0.0.1:$port)"
}

if [ -n "${XCUDA_COMPARE_UPSTREAM:-}" ]; then
	: >"$RESULTS/xcudad-server.log"
	start_server || exit 2
fi

start_daemon() {
	rm -f "$SOCK"
	echo "=== starting xcudad $(date -u +%FT%TZ)" >>"$LOG"
	env -u LD_LIBRARY_PATH "$XCUDAD" --socket "$SOCK" \
		${UP_ARGS[@]+"${UP_ARGS[@]}"} >>"$LOG" 2>&1 </dev/null &
	daemon_pid=$!
	for _ in $(seq 300); do # 30 s
		[ -e "$SOCK" ] && return 0
		if ! daemon_alive; then
			wait "$daemon_pid"
			echo "$0: xcudad exited with status $? before creating" \
				"$SOCK; its log:" >&2
			tail -n 30 "$LOG" >&2
			daemon_pid=
			return 1
		fi
		sleep 0.1
	done
	echo "$0: xcudad did not create $SOCK within 30 s; its log:" >&2
	tail -n 30 "$LOG" >&2
	stop_daemon
	return 1
}

start_daemon || exit 2

# A guest library built with SANITIZE=1 needs ASan's runtime loaded first,
# before the program's own libraries; the programs' own leaks are not ours.
PRELOAD=
asan=$(ldd "$XLIB/libcudart.so.13" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	PRELOAD=$asan
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi

# run NAME KIND: one run; stdout plus an "exit status" line into
# NAME.KIND.out, stderr into NAME.KIND.err.  Runs in an empty directory.
run() {
	local name=$1 kind=$2 rc
	local out=$RESULTS/$name.$kind.out err=$RESULTS/$name.$kind.err
	if [ "$kind" = native ]; then
		(cd "$TMP" && env -u LD_LIBRARY_PATH -u XCUDA_SOCKET \
			timeout "$TIMEOUT" "$BIN/$name") >"$out" 2>"$err" </dev/null
	else
		(cd "$TMP" && env LD_LIBRARY_PATH="$XLIB" XCUDA_SOCKET="$SOCK" \
			${PRELOAD:+LD_PRELOAD="$PRELOAD"} \
			${GUEST[@]+"${GUEST[@]}"} \
			timeout "$TIMEOUT" "$BIN/$name") >"$out" 2>"$err" </dev/null
	fi
	rc=$?
	case $rc in
	124 | 137) echo "exit status: $rc (timed out after ${TIMEOUT}s)" >>"$out" ;;
	*) echo "exit status: $rc" >>"$out" ;;
	esac
}

native_libcuda=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / {print $NF; exit}')
pass=0 fail=0 skip=0
summary=$RESULTS/summary.txt
: >"$summary"
for name in "${programs[@]}"; do
	rm -f "$RESULTS/$name".{native,xcuda}.{out,err} "$RESULTS/$name.diff"
	if [[ " ${XCUDA_SKIP:-} " == *" $name "* ]]; then
		echo "SKIP $name (XCUDA_SKIP)" | tee -a "$summary"
		skip=$((skip + 1))
		continue
	fi
	# A driver API program runs natively only where the driver is;
	# elsewhere what the real driver answers without a device
	# (nodevice/NAME.out, recorded with CUDA_VISIBLE_DEVICES= on a GPU
	# host) stands in, or the program is skipped.
	if [ -z "$native_libcuda" ] &&
		objdump -p "$BIN/$name" 2>/dev/null |
		grep -q 'NEEDED *libcuda\.so\.1'; then
		if [ -f "$HERE/nodevice/$name.out" ]; then
			cp "$HERE/nodevice/$name.out" "$RESULTS/$name.native.out"
		else
			echo "SKIP $name (the native run needs the NVIDIA" \
				"driver's libcuda.so.1, which this host lacks)" |
				tee -a "$summary"
			skip=$((skip + 1))
			continue
		fi
	else
		run "$name" native
	fi
	if ! daemon_alive; then
		[ -n "$daemon_pid" ] && wait "$daemon_pid" 2>/dev/null
		daemon_pid=
		start_daemon || exit 2
	fi
	echo "=== $name" >>"$LOG"
	run "$name" xcuda
	daemon_note=
	if ! daemon_alive; then
		wait "$daemon_pid"
		daemon_note="xcudad exited with status $? during $name"
		daemon_pid=
	fi
	# A daemon that dies while serving a program fails it, whatever the
	# output says.
	if diff -u --label "$name (native)" --label "$name (xcuda)" \
		"$RESULTS/$name.native.out" "$RESULTS/$name.xcuda.out" \
		>"$RESULTS/$name.diff" && [ -z "$daemon_note" ]; then
		rm -f "$RESULTS/$name.diff"
		echo "PASS $name" | tee -a "$summary"
		pass=$((pass + 1))
	else
		echo "FAIL $name" | tee -a "$summary"
		sed 's/^/    /' "$RESULTS/$name.diff"
		if [ -s "$RESULTS/$name.xcuda.err" ]; then
			echo "    --- stderr of the xcuda run (last lines):"
			tail -n 10 "$RESULTS/$name.xcuda.err" | sed 's/^/    /'
		fi
		fail=$((fail + 1))
	fi
	[ -n "$daemon_note" ] && echo "    note: $daemon_note" | tee -a "$summary"
done

line="$pass passed, $fail failed"
[ $skip -gt 0 ] && line="$line, $skip skipped"
echo "$line" >>"$summary"
echo "results in $RESULTS"
echo "$line"
[ $fail -eq 0 ]
