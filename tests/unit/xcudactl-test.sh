#!/usr/bin/env bash
# xcudactl against a real xcudad over the local transport: ping, echo of
# 1 B to 64 MiB, hold, bad arguments, and a daemon killed under a held
# session (a clear error, never a hang); status, the GPU memory per
# domain.  smi natively and through
# xcuda's NVML: status 3 and why wherever there is no NVML to be had.
#
#   tests/unit/xcudactl-test.sh BUILD_DIR
set -uo pipefail

B=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d)
dpid=
trap '[ -n "$dpid" ] && kill -9 "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # NAME CONDITION...
	local name=$1
	shift
	if "$@"; then
		echo "PASS $name"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		fail=$((fail + 1))
	fi
}

start_daemon() {
	# A killed daemon leaves its socket: wait for the new one.
	rm -f "$tmp/s.sock"
	"$B/bin/xcudad" --socket "$tmp/s.sock" --no-xen >>"$tmp/xcudad.log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && return 0; sleep 0.05; done
	return 1
}

export XCUDA_SOCKET=$tmp/s.sock XCUDA_QUIET=1
check "daemon starts" start_daemon

out=$("$B/bin/xcudactl" ping)
check "ping" test "$?" = 0 -a "${out#ping ok}" != "$out"

out=$("$B/bin/xcudactl" echo 1 4096 1M 16M 64M)
rc=$?
check "echo 1 B .. 64 MiB" test "$rc" = 0 -a "$(grep -c ' ok$' <<<"$out")" = 5

out=$("$B/bin/xcudactl" hold 1)
check "hold 1 s" test "$?" = 0 -a "${out% rounds ok}" != "$out"

"$B/bin/xcudactl" echo 12Q >/dev/null 2>&1
check "bad size is a usage error" test "$?" = 2
"$B/bin/xcudactl" frobnicate >/dev/null 2>&1
check "unknown command is a usage error" test "$?" = 2

# smi: natively, the host's NVML where it has one (a GPU host), else
# status 3 and why; xcuda's with no daemon, NVML's error; xcuda's through
# the daemon, the table where the worker has NVML, else
# NVML_ERROR_LIBRARY_NOT_FOUND.
"$B/bin/xcudactl" smi extra-arg >/dev/null 2>&1
check "smi with an argument is a usage error" test "$?" = 2
"$B/bin/xcudactl" smi >"$tmp/smi.out" 2>"$tmp/smi.err"
native=$?
if [ "$native" = 0 ]; then
	check "smi, the host's NVML: a table" \
		grep -q "^Driver version: " "$tmp/smi.out"
else
	check "smi without libnvidia-ml.so.1: status 3" test "$native" = 3
	check "smi without libnvidia-ml.so.1: the error says so" \
		grep -q "^xcudactl: no libnvidia-ml.so.1: " "$tmp/smi.err"
fi
XCUDA_SOCKET=/nonexistent LD_LIBRARY_PATH="$B/lib" "$B/bin/xcudactl" smi \
	>/dev/null 2>"$tmp/smi.err"
rc=$?
check "smi, xcuda's NVML, no daemon: status 3" test "$rc" = 3
check "smi, xcuda's NVML, no daemon: NVML's error" \
	grep -q "^xcudactl: NVML: " "$tmp/smi.err"
LD_LIBRARY_PATH="$B/lib" "$B/bin/xcudactl" smi >"$tmp/smi.out" \
	2>"$tmp/smi.err"
rc=$?
if [ "$native" = 0 ]; then
	check "smi, xcuda's NVML: status 0" test "$rc" = 0
	check "smi, xcuda's NVML: a table" \
		grep -q "^Driver version: " "$tmp/smi.out"
else
	check "smi, xcuda's NVML, a worker with no NVML: status 3" \
		test "$rc" = 3
	check "smi, xcuda's NVML, a worker with no NVML: library not found" \
		grep -qi "^xcudactl: NVML: .*library.not.found" "$tmp/smi.err"
	check "smi, xcuda's NVML, a worker with no NVML: no table" \
		test ! -s "$tmp/smi.out"
fi

# The daemon dies under a held session: its worker goes with it, and
# the guest side says so at once.
"$B/bin/xcudactl" hold 60 >"$tmp/hold.out" 2>&1 &
hpid=$!
sleep 0.5
kill -9 "$dpid"
wait "$dpid" 2>/dev/null
dpid=
t0=$SECONDS
rc=0
for _ in $(seq 100); do kill -0 "$hpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$hpid" 2>/dev/null; then
	kill -9 "$hpid"
	rc=hung
else
	wait "$hpid"
	rc=$?
fi
check "daemon killed: held session ends with status 3 ($((SECONDS - t0)) s)" \
	test "$rc" = 3
grep -q "session lost" "$tmp/hold.out"
check "daemon killed: the error says the session is lost" test $? = 0

"$B/bin/xcudactl" ping >/dev/null 2>&1
check "no daemon: ping fails with status 3" test "$?" = 3
check "daemon restarts" start_daemon
"$B/bin/xcudactl" ping >/dev/null 2>&1
check "after the restart a new session works" test "$?" = 0

# status: the daemon's GPU memory table, per domain (here: the uid).
kill "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
check "status: the table goes with the daemon" test ! -e "$tmp/s.sock.gpumem"
rm -f "$tmp/s.sock"
"$B/bin/xcudad" --socket "$tmp/s.sock" --no-xen --local-gpumem 2G \
	>>"$tmp/xcudad.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && break; sleep 0.05; done
out=$("$B/bin/xcudactl" status)
check "status: no sessions" test "$?" = 0 -a "${out%(no sessions)}" != "$out"
"$B/bin/xcudactl" hold 3 >/dev/null 2>&1 &
hpid=$!
for _ in $(seq 40); do
	out=$("$B/bin/xcudactl" status)
	[ "${out#*local-uid:}" != "$out" ] && break
	sleep 0.1
done
check "status: the held session's domain, its usage and quota" \
	grep -Eq "^local-uid:$(id -u) +0 \(0.0 MiB\) +2147483648 \(2048.0 MiB\) +1\$" <<<"$out"
wait "$hpid"
# The daemon drops the row when it reaps the worker, which may come a
# moment after the client has exited: wait for it, up to 5 s.
for _ in $(seq 50); do
	out=$("$B/bin/xcudactl" status "$tmp/s.sock.gpumem")
	[ "${out%(no sessions)}" != "$out" ] && break
	sleep 0.1
done
check "status FILE: the session is gone" test "${out%(no sessions)}" != "$out"
[ "${out%(no sessions)}" != "$out" ] || printf '    the table: %s\n' "$out"
"$B/bin/xcudactl" status "$tmp/nothing" >/dev/null 2>&1
check "status: no table is status 3" test "$?" = 3
"$B/bin/xcudad" --gpumem 8Q --no-xen >/dev/null 2>"$tmp/bad.err"
check "xcudad: a bad --gpumem is refused" test "$?" = 2
check "xcudad: and says why" grep -q "bad value '8Q' for --gpumem" "$tmp/bad.err"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
