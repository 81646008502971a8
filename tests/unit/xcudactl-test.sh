#!/usr/bin/env bash
# xcudactl against a real xcudad over the local transport: ping, echo of
# 1 B to 64 MiB, hold, bad arguments, and a daemon killed under a held
# session (a clear error, never a hang).
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

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
