#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs xcuda-bench natively and through xcuda (local transport) in one
# go, on the same GPU, and pairs the two:
#
#   tests/bench/run-bench.sh BUILD_DIR [xcuda-bench options: --smoke,
#                            --reps N, --only GROUP,...]
#
# Where python3 has PyTorch, its MLP training speed (torch_bench.py) is
# measured the same two ways (BENCH_TORCH=0: not).
# A third pass (BENCH_UPSTREAM=0: not) runs it through xcuda's upstream
# link: a relaying xcudad in front of a GPU server's xcudad over TCP on
# 127.0.0.1, with tcp-raw.c's raw loopback TCP throughput beside it as
# the yardstick for its copies, and its round trip as the floor under
# each synchronous call.
# Writes to $OUT if set, else BUILD_DIR/results/bench: native.csv,
# xcuda.csv, bench.csv (metric,size_bytes,unit,native,xcuda,ratio with
# ratio = xcuda / native) and bench.txt (the same as a table), and prints
# the table; with the upstream pass also upstream.csv, tcp-raw.csv,
# upstream-pairs.csv (metric,size_bytes,unit,local,upstream,ratio with
# ratio = upstream / local xcuda), upstream-targets.csv and upstream.txt
# (the pairs as a table and the targets, each ok or MISSED).  Plots:
# tests/bench/plot.sh on bench.csv.  Environment: NVCC, CUDA_HOME, CC;
# XCUDA_* (passed to the xcuda runs: XCUDA_SPIN_US, XCUDA_CHUNK_KB, ...).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [--smoke] [--reps N] [--only GROUP,...]" >&2; exit 2; }
B=$(cd "$1" && pwd)
shift
RES=${OUT:-$B/results/bench}
BIN=$B/bench/xcuda-bench
mkdir -p "$RES" "$B/bench"

"$HERE/build-bench.sh" "$B"
up=${BENCH_UPSTREAM:-1}
if [ "$up" != 0 ]; then
	"${CC:-cc}" -O2 -std=c11 -Wall -Wextra -Werror -pthread \
		-o "$B/bench/tcp-raw" "$HERE/tcp-raw.c"
fi

tmp=$(mktemp -d)
dpid="" spid="" rpid=""
# shellcheck disable=SC2086 # the pids: empty or one word each
trap 'for p in $dpid $spid $rpid; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# wait_sock PATH PID: whether xcudad PID made its socket PATH (10 s).
wait_sock() {
	for _ in $(seq 200); do
		[ -S "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# CPU seconds of xcudad PID's workers, once it has reaped them all.
children_cpu() {
	for _ in $(seq 100); do pgrep -P "$1" >/dev/null || break; sleep 0.05; done
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($14 + $15) / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo "?"
}
up_stop() {
	local p
	for p in $rpid $spid; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null || true
	done
	rpid="" spid=""
}
# up_pass XCUDA-BENCH-OPTIONS...: a GPU server's xcudad listening on a
# free port of 127.0.0.1, a relaying xcudad in front of it, xcuda-bench
# through the relay, into upstream.csv.  Its exit status, or 1 with the
# reason in upstream.err when a daemon did not start.  Sets rcpu and
# scpu: the CPU seconds of the relay's session and of the server's
# worker.
up_pass() {
	local port="" rc
	rcpu="?" scpu="?"
	(umask 077 && head -c 48 /dev/urandom >"$tmp/up.key")
	: >"$RES/xcudad-upstream.log"
	for _ in 1 2 3 4 5 6 7 8; do
		# Below Linux's ephemeral ports, which connections take.  The
		# bind test is xcudad's own: it binds the port before it makes
		# its socket, and exits when it cannot.  -v: each session's
		# link events in the logs too.
		port=$((20000 + RANDOM % 12000))
		env -u LD_LIBRARY_PATH "$B/bin/xcudad" -v --no-xen \
			--socket "$tmp/u.sock" --listen "127.0.0.1:$port" \
			--key "$tmp/up.key" >>"$RES/xcudad-upstream.log" 2>&1 &
		spid=$!
		wait_sock "$tmp/u.sock" "$spid" && break
		up_stop
		port=
		# Another port only when this one was taken.
		tail -n 3 "$RES/xcudad-upstream.log" | grep -q 'in use' || break
	done
	if [ -z "$port" ]; then
		echo "run-bench: no upstream xcudad:" \
			"$(tail -n 1 "$RES/xcudad-upstream.log")" >"$RES/upstream.err"
		return 1
	fi
	env -u LD_LIBRARY_PATH "$B/bin/xcudad" -v --no-xen \
		--socket "$tmp/r.sock" --upstream "127.0.0.1:$port" \
		--key "$tmp/up.key" >"$RES/xcudad-relay.log" 2>&1 &
	rpid=$!
	if ! wait_sock "$tmp/r.sock" "$rpid"; then
		echo "run-bench: no relaying xcudad:" \
			"$(tail -n 1 "$RES/xcudad-relay.log")" >"$RES/upstream.err"
		up_stop
		return 1
	fi
	env LD_LIBRARY_PATH="$B/lib" XCUDA_SOCKET="$tmp/r.sock" \
		${guest[@]+"${guest[@]}"} "$BIN" "$@" \
		>"$RES/upstream.csv" 2>"$RES/upstream.err"
	rc=$?
	# The relay's session ends first; the server's worker when its
	# link does.
	rcpu=$(children_cpu "$rpid")
	scpu=$(children_cpu "$spid")
	up_stop
	return "$rc"
}
env -u LD_LIBRARY_PATH "$B/bin/xcudad" --socket "$tmp/s.sock" --no-xen \
	>"$RES/xcudad.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && break; sleep 0.05; done

set +e
env -u LD_LIBRARY_PATH "$BIN" "$@" >"$RES/native.csv" 2>"$RES/native.err"
nrc=$?
# Through xcuda the program sees the host as a guest does, where it can.
guest=()
"$HERE/../cuda/as-guest.sh" --check && guest=("$HERE/../cuda/as-guest.sh")
env LD_LIBRARY_PATH="$B/lib" XCUDA_SOCKET="$tmp/s.sock" \
	${guest[@]+"${guest[@]}"} "$BIN" "$@" \
	>"$RES/xcuda.csv" 2>"$RES/xcuda.err"
xrc=$?
# Through the upstream link: the same program and wrapping, its socket
# the relay's.
urc=0 trc=0
if [ "$up" != 0 ]; then
	up_pass "$@"
	urc=$?
	# tcp-raw with xcuda-bench's --reps, where given.
	traw=()
	prev=
	for a in "$@"; do
		[ "$prev" = --reps ] && traw=(--reps "$a")
		prev=$a
	done
	"$B/bench/tcp-raw" ${traw[@]+"${traw[@]}"} >"$RES/tcp-raw.csv" \
		2>"$RES/tcp-raw.err"
	trc=$?
fi
# PyTorch's training steps, where python3 has torch (not for --smoke, nor
# for --only without torch):
# natively, then through xcuda-run as a guest, with a daemon whose
# cuBLAS is the one PyTorch bundles.
if [[ " $* " != *" --smoke "* ]] && [ "$nrc" -eq 0 ] &&
	{ [[ " $* " != *" --only "* ]] || [[ "$*" == *torch* ]]; } &&
	[ "${BENCH_TORCH:-1}" = 1 ] && python3 -c 'import torch' 2>/dev/null; then
	tlibs=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "cu13", "lib"))')
	XCUDA_MATH_LIBS=$tlibs env -u LD_LIBRARY_PATH "$B/bin/xcudad" \
		--socket "$tmp/t.sock" --no-xen >>"$RES/xcudad.log" 2>&1 &
	tpid=$!
	for _ in $(seq 100); do [ -S "$tmp/t.sock" ] && break; sleep 0.05; done
	env -u LD_LIBRARY_PATH python3 "$HERE/torch_bench.py" >>"$RES/native.csv" \
		2>>"$RES/native.err"
	env XCUDA_SOCKET="$tmp/t.sock" ${guest[@]+"${guest[@]}"} \
		"$B/bin/xcuda-run" python3 "$HERE/torch_bench.py" \
		>>"$RES/xcuda.csv" 2>>"$RES/xcuda.err"
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
fi
set -e
# The worker's CPU: xcudad has reaped it once the session is over.
wcpu=$(children_cpu "$dpid")
last() { tail -n 1 "$RES/$1.err"; }
[ "$trc" -eq 0 ] || echo "tcp-raw: exit $trc ($(last tcp-raw))"
if [ "$nrc" -ne 0 ] || [ "$xrc" -ne 0 ] || [ "$urc" -ne 0 ]; then
	msg="xcuda-bench: native exit $nrc ($(last native)), xcuda exit $xrc ($(last xcuda))"
	[ "$up" = 0 ] || msg+=", upstream exit $urc ($(last upstream))"
	echo "$msg"
	# Without a GPU every run must fail the same way; that is all a
	# smoke run on a CPU machine can check (tcp-raw needs no GPU).
	alike=1
	{ [ "$nrc" -eq "$xrc" ] && [ "$(last native)" = "$(last xcuda)" ]; } || alike=0
	[ "$up" = 0 ] || { [ "$nrc" -eq "$urc" ] &&
		[ "$(last native)" = "$(last upstream)" ]; } || alike=0
	[ "$alike" = 1 ] && [ "$trc" -eq 0 ] && exit 3
	exit 1
fi
[ "$trc" -eq 0 ] || exit 1

# pair BASE.csv RUN.csv BASE_NAME RUN_NAME: the rows of both,
# metric,size_bytes,unit,BASE_NAME,RUN_NAME,ratio (ratio = RUN / BASE);
# fails if a row of RUN has no non-zero BASE.
pair() {
	awk -F, -v a="$3" -v b="$4" '
	NR == FNR { if (FNR > 1) base[$1 "," $2] = $3; next }
	FNR == 1 { print "metric,size_bytes,unit," a "," b ",ratio"; next }
	{
		k = $1 "," $2
		if (!(k in base) || base[k] == 0) { bad = 1; next }
		printf "%s,%s,%s,%s,%s,%.3f\n", $1, $2, $4, base[k], $3,
		       $3 / base[k]
	}
	END { exit bad }' "$1" "$2"
}
# pair_table RATIO_NAME <PAIRS.csv: pair's rows as a table.
pair_table() {
	awk -F, -v r="$1" '
	function human(n) {
		if (n == 0) return "-"
		if (n >= 1048576) return n / 1048576 "M"
		if (n >= 1024) return n / 1024 "K"
		return n
	}
	NR == 1 {
		printf "%-14s %6s %5s %12s %12s %8s  %s\n", "metric", "size",
		       "unit", $4, $5, r, "better"
		next
	}
	{
		better = ($3 ~ /\/s$/) ? "higher" : "lower"
		printf "%-14s %6s %5s %12.4g %12.4g %8.3f  %s\n", $1, human($2),
		       $3, $4, $5, $6, better
	}'
}

pair "$RES/native.csv" "$RES/xcuda.csv" native xcuda >"$RES/bench.csv"
pair_table x/n <"$RES/bench.csv" | tee "$RES/bench.txt"
{
	echo "cpu: the application process; the xcuda worker used $wcpu s more"
	echo "(medians of each row's repetitions; ratio = xcuda / native; $(date -u +%FT%TZ))"
} | tee -a "$RES/bench.txt"

[ "$up" != 0 ] || exit 0
# The upstream pass against the local one, row by row.
pair "$RES/xcuda.csv" "$RES/upstream.csv" local upstream >"$RES/upstream-pairs.csv"
# The targets: launch plus synchronise within 2x of local, and each
# 64 MiB copy between pageable or pinned memory and the device at least
# 0.9x of raw loopback TCP.
raw=$(awk -F, '$1 == "tcp_raw" { print $3 }' "$RES/tcp-raw.csv")
awk -F, -v raw="$raw" '
NR == 1 { print "target,size_bytes,unit,reference,upstream,ratio,goal,result"; next }
$1 == "launch_sync" {
	printf "launch_sync_vs_local,%s,%s,%s,%s,%.3f,<=2,%s\n", $2, $3, $4,
	       $5, $6, ($6 <= 2 ? "ok" : "MISSED")
}
$2 == 67108864 && $1 ~ /^(pinned|pageable)_(h2d|d2h)$/ && raw > 0 {
	r = $5 / raw
	printf "%s_vs_tcp_raw,%s,%s,%s,%s,%.3f,>=0.9,%s\n", $1, $2, $3, raw,
	       $5, r, (r >= 0.9 ? "ok" : "MISSED")
}' "$RES/upstream-pairs.csv" >"$RES/upstream-targets.csv"

{
	pair_table u/l <"$RES/upstream-pairs.csv"
	echo "tcp_raw: ${raw:-?} GB/s over loopback TCP, 64 MiB sends (tcp-raw.c)"
	echo "targets:"
	awk -F, '
	NR > 1 {
		if ($1 ~ /_vs_local$/) sync = 1; else copies = 1
		what = ($1 ~ /_vs_local$/) ? "upstream / local" : "upstream / tcp_raw"
		name = $1
		sub(/_vs_.*/, "", name)
		if ($2 == 67108864)
			name = name " 64M"
		goal = $7
		sub(/^[<>]=/, "& ", goal)
		printf "  %-17s %-18s %8.3f  target %-6s %s\n", name, what,
		       $6, goal, $8
	}
	END {
		if (!sync)
			print "  launch_sync: not measured (--only)"
		if (!copies)
			print "  64 MiB copies: not measured (--smoke, --quick, --only)"
	}' "$RES/upstream-targets.csv"
	# A synchronous call over the link pays at least one TCP round trip.
	awk -F, '
	NR == FNR { if ($1 ~ /^tcp_rtt_/) rtt[$1] = $3; next }
	$1 == "launch_sync" { extra = $5 - $4 }
	END {
		if (!("tcp_rtt_spin" in rtt)) exit
		printf "round trip: raw 64-byte loopback TCP %s us spinning, " \
		       "%s us sleeping (tcp-raw.c)", rtt["tcp_rtt_spin"],
		       rtt["tcp_rtt_sleep"]
		if (extra != "")
			printf "; launch_sync upstream - local: %.2f us", extra
		printf "\n"
	}' "$RES/tcp-raw.csv" "$RES/upstream-pairs.csv"
	echo "cpu: the relay's session used $rcpu s, the server's worker $scpu s"
	echo "(medians of each row's repetitions; ratio = upstream / local xcuda; $(date -u +%FT%TZ))"
} | tee "$RES/upstream.txt"
