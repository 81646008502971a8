# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# Commands in single quotes are for the DomU's shell to expand:
# shellcheck disable=SC2016
#
# The rig's scenarios, sourced by dom0-init.sh (busybox sh in Dom0),
# whose helpers they use: domu (run a command in the DomU), workers
# (xcudad's worker count), wait_for, fail, need, states.  run.sh reads
# the SCENARIOS line to know which results to expect, and the
# SCENARIOS_GUEST line for the passes in other guest types: a PVH DomU,
# whose results are named "pvh:NAME" (they are scenarios 1 to 10 of the
# first pass), and the HVM DomU that XCUDA_RIG_HVM=1 adds ("hvm:NAME");
# gpu-rig.sh reads the SCENARIOS_GPU line.

# shellcheck disable=SC2034 # read by run.sh
SCENARIOS="connect echo cuda-compare parallel kill-client kill-daemon reload hostile destroy hotplug pingpong corrupt-ring upstream grant-linger event-flood bad-backend"
# shellcheck disable=SC2034 # read by run.sh
SCENARIOS_GUEST="connect echo cuda-compare parallel kill-client kill-daemon reload hostile destroy hotplug"
# shellcheck disable=SC2034 # read by gpu-rig.sh
SCENARIOS_GPU="connect cuda-compare measure never-ending"

XCUDACTL="LD_LIBRARY_PATH=$OPT/lib xcudactl"
RING_TEST="LD_LIBRARY_PATH=$OPT/lib xcuda-ring-test"

# A session works: one small ECHO through a fresh session.
session_works() {
	if ! domu_ok 60 "$XCUDACTL echo 4096"; then
		fail "$1: a new session failed (status $DU_RC): $(tail -n 2 "$W/domu.out" "$W/domu.err" | tr '\n' ' ')"
		return 1
	fi
}

# wait_connected SECONDS WHEN
wait_connected() {
	if ! wait_for "$1" connected; then
		fail "$2: not Connected after $1 s ($(states))"
		return 1
	fi
}

# wait_workers SECONDS OP N: until the worker count is OP N (-eq, -ge...).
wait_workers() {
	wait_for "$1" "workers_are $2 $3"
}
workers_are() {
	wa_n=$(workers)
	test "$wa_n" "$1" "$2"
}

# A clean, unconnected pair of ends after one end went away: the
# frontend Closed (or starting over), the backend Closed or waiting.
clean_state() {
	case "$(fe_state)/$(be_state)" in
	[16]/[26]) return 0 ;;
	esac
	return 1
}

# bg_start NAME CMD: CMD in the background in the DomU; its pid goes to
# /tmp/NAME.pid and, when it ends, its status to /tmp/NAME.rc.
bg_start() {
	domu_ok 20 "rm -f /tmp/$1.rc; ( $2 >/tmp/$1.out 2>&1 & echo \$! >/tmp/$1.pid; wait \$!; echo \$? >/tmp/$1.rc ) >/dev/null 2>&1 &"
}

# domu_rmmod MODULE: unbind and unload a xenbus driver in the DomU
# (rig-rmmod.sh says why both); on failure, show who holds what.
domu_rmmod() {
	domu_ok 30 "rig-rmmod $1" && { sed 's/^/RIG:   /' "$W/domu.out"; return 0; }
	rm_why="rig-rmmod $1 in the DomU: status $DU_RC: $(cat "$W/domu.err")"
	domu 30 'grep xcuda /proc/modules; ps | grep -v " \["; ls -l /proc/[0-9]*/fd 2>/dev/null | grep -e "^/proc" -e xcuda | grep -B1 xcuda'
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	fail "$rm_why"
	return 1
}

xcudad_alive() { [ -n "$XPID" ] && kill -0 "$XPID" 2>/dev/null; }

# cpu_ticks: Dom0's CPU time so far over all its CPUs (USER_HZ ticks),
# "BUSY IDLE STEAL": busy is user, nice, system, irq and softirq; idle is
# idle and iowait; steal is the time Xen ran other vCPUs instead.
cpu_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6, $9, $4 + $7 + $8; exit }' /proc/stat
}
# cpu_pct "TICKS0" "TICKS1": Dom0's busy share of the time between them,
# in percent of all its CPUs' time, then the stolen share, then the
# kernel's part of the busy share (system, irq, softirq).
cpu_pct() {
	echo "$1 $2" | awk '{ b = $5 - $1; i = $6 - $2; s = $7 - $3; k = $8 - $4
		t = b + i + s; if (t <= 0) t = 1
		printf "%.0f %.0f %.0f\n", 100 * b / t, 100 * s / t, 100 * k / t }'
}
# be_irqs: the interrupts Dom0 took on xcuda-back's control channels.
be_irqs() {
	awk '$NF == "xcuda-back" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts
}
# be_xb FILE: a xenbus statistic of xcuda-back's device (events on its
# late-EOI channels, spurious_events, jiffies_eoi_delayed).
be_xb() { cat "/sys/bus/xen-backend/devices/xcuda-$DOMID-0/xenbus/$1" 2>/dev/null || echo 0; }

# ho_named CASE: xcuda-hostile.ko with cases=CASE alone, until its DONE
# line (at most 120 s); the lines of this load stay in $W/domu.out.
ho_named() {
	domu 150 "l0=\$(dmesg | wc -l); insmod /lib/xcuda/xcuda-hostile.ko cases=$1 || exit 1; i=0; while [ \$i -lt 240 ] && ! dmesg | tail -n +\$((l0 + 1)) | grep -q 'xcuda-hostile: DONE'; do sleep 0.5; i=\$((i + 1)); done; dmesg | tail -n +\$((l0 + 1)) | grep 'xcuda-hostile: '"
	sed 's/^/RIG:   domu: /' "$W/domu.out"
}

# ------------------------------------------------------------------ 1

sc_connect() {
	need BACK xcuda-back.ko FRONT xcuda-front.ko || return
	[ "$BACK_RC" = 0 ] || { fail "insmod xcuda-back in Dom0: status $BACK_RC"; return; }
	wait_for 30 '[ -n "$(xsr "$XT/insmod")" ]'
	fr=$(xsr "$XT/insmod")
	[ "$fr" = 0 ] || { fail "insmod xcuda-front in the DomU: status ${fr:-none}"; return; }
	wait_connected 30 "after boot" || return
	say "both ends Connected: $(states)"
	xenstore-ls -fp "/local/domain/$DOMID/device/xcuda" | sed 's/^/RIG:   /'
	xenstore-ls -fp "/local/domain/0/backend/xcuda/$DOMID" | sed 's/^/RIG:   /'
	[ "$RIG_GUEST" = pv ] && return
	# The pass's guest is of its type, as its kernel sees itself
	# (/sys/hypervisor/guest_type: PV, PVH or HVM), and how its events
	# come: the callback vector (HYP in /proc/interrupts) or, in an HVM
	# guest without it, the platform PCI device's interrupt.
	domu 30 "cat /sys/hypervisor/guest_type; grep -e HYP -e xen-platform -e xcuda /proc/interrupts; dmesg | grep -i -e 'xen hvm' -e 'platform pci' -e 'callback vector'"
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	cn_t=$(head -n 1 "$W/domu.out")
	[ "$cn_t" = "$(upper "$RIG_GUEST")" ] ||
		fail "the DomU is a '$cn_t' guest, not $RIG_GUEST"
}

# ------------------------------------------------------------------ 2

sc_echo() {
	need XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	domu 300 "$XCUDACTL echo 1 4096 1M 16M 64M"
	sed 's/^/RIG:   /' "$W/domu.out" "$W/domu.err"
	[ "$DU_RC" = 0 ] || { fail "xcudactl echo: status ${DU_RC:-none}"; return; }
	for s in 1 4096 1M 16M 64M; do
		grep -qx "echo $s ok" "$W/domu.out" || { fail "no 'echo $s ok'"; return; }
	done
	# Measured, not judged: one Dom0 worker answers both, over the xen
	# ring from the DomU and over local from Dom0 (RIG-PING lines).
	# The PVH pass measures both again, beside the PV pass's lines.
	ec_pre=
	[ "$RIG_GUEST" = pv ] || ec_pre="$RIG_GUEST "
	domu 300 "$XCUDACTL ping 2000"
	sed "s/^/RIG-PING: ${ec_pre}domU xen: /" "$W/domu.out"
	grep -q '^ping ok' "$W/domu.out" || { fail "ping in the DomU: status ${DU_RC:-none}"; return; }
	LD_LIBRARY_PATH=$OPT/lib timeout 300 xcudactl ping 2000 2>&1 | sed "s/^/RIG-PING: ${ec_pre}dom0 local: /"
	echo_spinning "$ec_pre" || return
	[ "$RIG_GUEST" = pv ] && return
	# Where an auto-translated guest put the arena's frames: unpopulated
	# address space ("Xen scratch") or ballooned-out RAM.
	domu 30 "grep -i -e 'xen scratch' /proc/iomem; grep -e MemTotal -e MemFree /proc/meminfo"
	sed 's/^/RIG:   domu: /' "$W/domu.out"
}

# ep_median FILE: the median of a ping's output, in us.
ep_median() { sed -n 's/.*median \([0-9.]*\) us.*/\1/p' "$1" | head -n 1; }

# The spinning regime, which the xen path is held to (1.1x local): under
# emulation a wait of the default length always ends in a sleep, so the
# worker and the pinging process spin up to EP_SPIN_US (XCUDA_SPIN_US)
# before they sleep.  The same Dom0 worker code answers both, over the
# xen ring from the DomU and over local from Dom0; measured, not judged.
# Each side is quiet while the other measures: the rig polls xenstore
# five times a second on both sides (a process each time), which took
# about 6 % off the DomU's pings.  So Dom0 sleeps through the DomU's
# (EP_QUIET_S, the ping starting EP_LEAD_S in), and the DomU's agent
# sleeps through Dom0's.
EP_SPIN_US=200000
EP_LEAD_S=2
EP_QUIET_S=15
echo_spinning() { # PREFIX (of the RIG-PING lines: the guest type)
	ep_pre=$1
	xcudad_stop
	export XCUDA_SPIN_US=$EP_SPIN_US
	xcudad_start
	ep_rc=$?
	unset XCUDA_SPIN_US
	if [ "$ep_rc" != 0 ]; then
		fail "xcudad did not start with XCUDA_SPIN_US=$EP_SPIN_US"
		xcudad_start
		return 1
	fi
	domu_send 300 "read u0 r </proc/uptime; sleep $EP_LEAD_S; XCUDA_SPIN_US=$EP_SPIN_US $XCUDACTL ping 2000; e=\$?; read u1 r </proc/uptime; echo \"done \$u0 \$u1\"; exit \$e" &&
		sleep "$EP_QUIET_S" && domu_wait
	ep_xrc=$DU_RC
	grep -v '^done ' "$W/domu.out" | sed "s/^/RIG-PING: ${ep_pre}spinning: domU xen: /"
	ep_took=$(awk '$1 == "done" { printf "%.1f", $3 - $2 }' "$W/domu.out")
	[ -n "$ep_took" ] && awk -v t="$ep_took" -v q="$EP_QUIET_S" 'BEGIN { exit !(t > q - 1) }' &&
		say "RIG-PING: ${ep_pre}spinning: the DomU's ping took $ep_took s of Dom0's $EP_QUIET_S s quiet: not all of it was quiet"
	cp "$W/domu.out" "$W/ep.xen"
	ep_q=0
	domu_send 60 "sleep $EP_QUIET_S" && ep_q=1 && sleep "$EP_LEAD_S"
	ep_t0=$(now_ds)
	(cd / && XCUDA_SPIN_US=$EP_SPIN_US LD_LIBRARY_PATH=$OPT/lib timeout 300 \
		xcudactl ping 2000) >"$W/ep.local" 2>&1
	ep_t1=$(now_ds)
	[ "$ep_q" = 0 ] || domu_wait
	sed "s/^/RIG-PING: ${ep_pre}spinning: dom0 local: /" "$W/ep.local"
	[ $((ep_t1 - ep_t0 + EP_LEAD_S * 10)) -lt $((EP_QUIET_S * 10 - 10)) ] ||
		say "RIG-PING: ${ep_pre}spinning: Dom0's ping took $(((ep_t1 - ep_t0) / 10)) s of the DomU's $EP_QUIET_S s quiet: not all of it was quiet"
	ep_x=$(ep_median "$W/ep.xen")
	ep_l=$(ep_median "$W/ep.local")
	if [ -n "$ep_x" ] && [ -n "$ep_l" ]; then
		say "RIG-PING: ${ep_pre}spinning: xen / local = $(awk -v x="$ep_x" -v l="$ep_l" 'BEGIN { printf "%.2f", x / l }') ($ep_x us / $ep_l us)"
	fi
	xcudad_stop
	xcudad_start || { fail "xcudad did not restart"; return 1; }
	grep -q '^ping ok' "$W/ep.xen" ||
		{ fail "spinning ping in the DomU: status ${ep_xrc:-none}"; return 1; }
}

# ------------------------------------------------------------------ 3

# On a GPU the programs get as far as they do natively: memcpy_sizes pins
# 256 MiB, beyond a session's default arena on the xen transport (64 MiB),
# and host_register 32 MiB; graph_api keeps three graphs of 96 MiB of
# pageable copies each (bounce blocks take at most half the pinned heap).
# Arenas are granted Dom0 pages: on the GPU rig 1.25 GiB at once
# (gnttab_max_frames=640, gpu-rig.sh), of which a domain may hold 3/4
# (xcuda-back's max_domain_grants), and ipc and pool_ipc run two sessions
# at once: the others get 128 MiB.
cc_env() {
	[ "$RIG_MODE" = gpu ] || return 0
	case $1 in
	graph_api) echo "XCUDA_ARENA_MB=768" ;;
	memcpy_sizes) echo "XCUDA_ARENA_MB=320" ;;
	*) echo "XCUDA_ARENA_MB=128" ;;
	esac
}

sc_cuda_compare() {
	need TESTS "the CUDA test programs" GUESTLIB libcudart.so.13 XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	cc_bad=
	cc_n=0
	cc_skip=0
	mkdir -p "$W/cmp"
	while read -r p; do
		cc_n=$((cc_n + 1))
		if [ "$RIG_MODE" = gpu ]; then
			# the GPU host's native run, fetched at boot
			cc_ref=$W/refs/$p.native.out
			if [ ! -f "$cc_ref" ]; then
				say "skipped: $p (the GPU host did not run it natively)"
				cc_skip=$((cc_skip + 1))
				continue
			fi
			cc_nrc=missing
		else
			# natively in Dom0: the binary's RUNPATH finds the real
			# runtime
			(cd / && timeout 120 "$OPT/tests/cuda/$p") </dev/null \
				>"$W/cmp/$p.native.raw" 2>"$W/cmp/$p.native.err"
			cc_nrc=$?
			# A driver API program needs a driver to run natively:
			# Dom0 has none, so the real driver's answers without a
			# device stand in.
			cc_ref=$OPT/tests/cuda/nodevice/$p.out
		fi
		# a reference ends with the line "exit status: N"
		if [ "$cc_nrc" = missing ] || { [ "$cc_nrc" = 127 ] && [ -f "$cc_ref" ]; }; then
			sed '$d' "$cc_ref" >"$W/cmp/$p.native.raw"
			cc_nrc=$(sed -n '$s/^exit status: \([0-9]*\).*/\1/p' "$cc_ref")
		fi
		# the same output path as the DomU's: line by line, \r dropped
		while IFS= read -r l || [ -n "$l" ]; do
			printf '%s\n' "$l"
		done <"$W/cmp/$p.native.raw" | tr -d '\r' >"$W/cmp/$p.native"
		domu 150 "$(cc_env "$p") LD_LIBRARY_PATH=$OPT/lib timeout 120 $OPT/tests/cuda/$p"
		# Output the console lost is no result: once more.
		if [ "$DU_LOST" = 1 ]; then
			say "again: $p (the console lost lines of its output)"
			domu 150 "$(cc_env "$p") LD_LIBRARY_PATH=$OPT/lib timeout 120 $OPT/tests/cuda/$p"
		fi
		cc_xrc=$DU_RC
		cp "$W/domu.out" "$W/cmp/$p.xcuda"
		cp "$W/domu.err" "$W/cmp/$p.xcuda.err"
		if [ "$cc_nrc" = "$cc_xrc" ] && cmp -s "$W/cmp/$p.native" "$W/cmp/$p.xcuda"; then
			say "same: $p (status $cc_nrc)"
		else
			say "DIFFERENT: $p: status native $cc_nrc, xcuda ${cc_xrc:-none}"
			diff -u "$W/cmp/$p.native" "$W/cmp/$p.xcuda" | sed 's/^/RIG:   /'
			sed 's/^/RIG:   xcuda stderr: /' "$W/cmp/$p.xcuda.err"
			cc_bad="$cc_bad $p"
		fi
	done <"$OPT/tests/cuda/PROGRAMS"
	[ -z "$cc_bad" ] || fail "differ:$cc_bad"
	[ "$cc_n" -gt "$cc_skip" ] || fail "no program was compared"
	say "$((cc_n - cc_skip)) programs compared, $cc_skip skipped"
}

# ------------------------------------------------------------------ 4

sc_parallel() {
	need XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	pa_s0=$(grep -c 'worker [0-9]* started' "$XCUDAD_LOG")
	domu 300 "i=1; pids=; while [ \$i -le 8 ]; do $XCUDACTL echo 1 4096 1M 4M >/tmp/par.\$i 2>&1 & pids=\"\$pids \$!\"; i=\$((i + 1)); done; i=1; for p in \$pids; do wait \$p; echo \"proc \$i status \$? ok \$(grep -c '^echo .* ok\$' /tmp/par.\$i)\"; i=\$((i + 1)); done; cat /tmp/par.*"
	sed 's/^/RIG:   /' "$W/domu.out"
	pa_good=$(grep -c '^proc [0-9] status 0 ok 4$' "$W/domu.out")
	[ "$pa_good" = 8 ] || { fail "$pa_good of 8 processes ok"; return; }
	pa_s=$(($(grep -c 'worker [0-9]* started' "$XCUDAD_LOG") - pa_s0))
	[ "$pa_s" -ge 8 ] || { fail "xcudad started $pa_s workers for 8 processes"; return; }
	wait_workers 20 -eq 0 || { fail "$(workers) workers left after the processes ended"; return; }
	pa_sessions 1 && pa_sessions 8 || return
	wait_workers 20 -eq 0 || fail "$(workers) workers left after the sleeping pings"
}

# One event channel per session (docs/protocol.md, "Why one event
# channel per session"), measured, not judged: N processes at once, each
# pinging over its own session, sleeping on every answer
# (XCUDA_SPIN_US=0) so that each round trip takes events.  One
# RIG-SESSIONS line per N: the processes' medians, the bells they rang
# and the sleeps they took, and the events Dom0 took on xcuda-back's
# channels per round trip (xenbus counts them past a channel's close;
# each session adds its SESSION_NEW and SESSION_END on the control
# channel).
PA_TRIPS=200
pa_sessions() { # N
	pa_i0=$(be_xb events)
	domu 300 "i=1; while [ \$i -le $1 ]; do XCUDA_SPIN_US=0 XCUDA_ARENA_MB=8 $XCUDACTL ping $PA_TRIPS >/tmp/pas.\$i 2>&1 & i=\$((i + 1)); done; wait; cat /tmp/pas.*; rm -f /tmp/pas.*"
	pa_i1=$(be_xb events)
	pa_ok=$(grep -c '^ping ok' "$W/domu.out")
	[ "$pa_ok" = "$1" ] || {
		sed 's/^/RIG:   /' "$W/domu.out"
		fail "$pa_ok of $1 sleeping pings ok"
		return 1
	}
	pa_m=$(sed -n 's/.*median \([0-9.]*\) us.*/\1/p' "$W/domu.out" | sort -n | tr '\n' ' ')
	pa_b=$(sed -n 's/.* \([0-9]*\) bells rung, \([0-9]*\) sleeps.*/\1 \2/p' "$W/domu.out" |
		awk '{ b += $1; s += $2 } END { printf "%d bells, %d sleeps", b, s }')
	say "RIG-SESSIONS: $1 at once, $PA_TRIPS sleeping round trips each: medians ${pa_m}us; DomU $pa_b; Dom0 took $((pa_i1 - pa_i0)) events ($(awk -v n=$((pa_i1 - pa_i0)) -v t=$(($1 * PA_TRIPS)) 'BEGIN { printf "%.2f", n / t }') a round trip)"
}

# ------------------------------------------------------------------ 5

sc_kill_client() {
	need XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	kc_w0=$(workers)
	bg_start hold5 "$XCUDACTL hold 30" || { fail "could not start xcudactl hold"; return; }
	wait_workers 30 -gt "$kc_w0" || { fail "no worker for the session"; return; }
	kc_w1=$(workers)
	sleep 2
	domu_ok 20 'kill -9 $(cat /tmp/hold5.pid)' || { fail "kill -9 in the DomU failed"; return; }
	say "killed the DomU process; workers: $kc_w1 before"
	wait_workers 20 -eq "$kc_w0" || { fail "its worker did not exit ($(workers) workers, $kc_w0 before the session)"; return; }
	session_works "after the kill" || return
}

# ------------------------------------------------------------------ 6

sc_kill_daemon() {
	need XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	bg_start hold6 "$XCUDACTL hold 60" || { fail "could not start xcudactl hold"; return; }
	wait_workers 30 -ge 1 || { fail "no worker for the session"; return; }
	sleep 2
	say "kill -9 xcudad ($XPID)"
	kill -9 "$XPID"
	wait "$XPID" 2>/dev/null
	XPID=
	# the DomU process must end with status 3 within 20 s of the kill
	domu 40 'i=0; while [ ! -s /tmp/hold6.rc ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done; echo "status $(cat /tmp/hold6.rc 2>/dev/null) after $((i * 100)) ms"; cat /tmp/hold6.out'
	sed 's/^/RIG:   /' "$W/domu.out"
	kd_st=$(sed -n 's/^status \([0-9]*\) after.*/\1/p' "$W/domu.out")
	say "xcudad restart"
	xcudad_start || { fail "xcudad did not restart"; return; }
	[ -n "$kd_st" ] || { fail "xcudactl hold did not end within 20 s of the kill"; return; }
	[ "$kd_st" = 3 ] || { fail "xcudactl hold ended with status $kd_st, not 3"; return; }
	grep -q '^hold: session lost: ' "$W/domu.out" || { fail "no 'hold: session lost:' message"; return; }
	! xcuda_back_users | grep -qvx "$XPID" || { fail "processes still hold /dev/xcuda-back: $(xcuda_back_users)"; return; }
	session_works "after the restart" || return

	# --max-arena holds for Xen sessions too, not only the backend's limit
	say "xcudad restart with --max-arena 16 (echo 32M asks for 33 MiB)"
	xcudad_stop
	xcudad_start --max-arena 16 || { fail "xcudad did not restart with --max-arena 16"; return; }
	domu 60 "$XCUDACTL echo 32M"
	sed 's/^/RIG:   /' "$W/domu.out" "$W/domu.err"
	kd_ma=$(grep -c 'more than --max-arena 16: refusing the session' "$XCUDAD_LOG")
	xcudad_stop
	xcudad_start || { fail "xcudad did not restart"; return; }
	[ "$DU_RC" != 0 ] || { fail "a 33 MiB arena was served past --max-arena 16"; return; }
	[ "$kd_ma" -ge 1 ] || { fail "xcudad did not say why it refused the session"; return; }
	session_works "after the restart without --max-arena" || return

	# A flood of the local socket leaves Xen guests their share: of 8
	# sessions, the socket gets 7 (--max-local-sessions' default)
	say "local flood: 10 held sessions from Dom0, xcudad --max-sessions 8"
	xcudad_stop
	xcudad_start --max-sessions 8 || { fail "xcudad did not restart with --max-sessions 8"; return; }
	# counted from xcudad's log: ten busy holds starve a /proc walk
	kd_w0=$(grep -c 'worker [0-9]* started' "$XCUDAD_LOG")
	kd_k0=$(grep -c 'kept for Xen guests: refusing' "$XCUDAD_LOG")
	kd_pids=
	for kd_i in 1 2 3 4 5 6 7 8 9 10; do
		LD_LIBRARY_PATH=$OPT/lib xcudactl hold 600 >/dev/null 2>&1 &
		kd_pids="$kd_pids $!"
	done
	wait_for 120 '[ $(($(grep -c "worker [0-9]* started" "$XCUDAD_LOG") - kd_w0)) -ge 7 ] &&
		[ "$(grep -c "kept for Xen guests: refusing" "$XCUDAD_LOG")" -gt "$kd_k0" ]' ||
		say "the flood did not fill the local pool"
	kd_held=$(($(grep -c 'worker [0-9]* started' "$XCUDAD_LOG") - kd_w0))
	# the holds run on while the DomU asks for its session
	domu 300 "$XCUDACTL echo 4096"
	sed 's/^/RIG:   /' "$W/domu.out" "$W/domu.err"
	kd_rc=$DU_RC
	kd_kept=$(($(grep -c 'kept for Xen guests: refusing' "$XCUDAD_LOG") - kd_k0))
	# shellcheck disable=SC2086 # the pids split
	kill $kd_pids 2>/dev/null
	wait_workers 30 -eq 0 || say "$(workers) workers left after the flood"
	xcudad_stop
	xcudad_start || { fail "xcudad did not restart"; return; }
	[ "$kd_held" = 7 ] || { fail "the local socket held $kd_held of 8 sessions, not 7"; return; }
	[ "$kd_kept" -ge 1 ] || { fail "xcudad did not say it kept sessions for Xen guests"; return; }
	[ "$kd_rc" = 0 ] && grep -qx "echo 4096 ok" "$W/domu.out" ||
		{ fail "the DomU found no session while the local socket was flooded"; return; }
	session_works "after the flood" || return
}

# ------------------------------------------------------------------ 7

sc_reload() {
	need BACK xcuda-back.ko FRONT xcuda-front.ko XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	domu_rmmod xcuda_front || return
	wait_for 20 clean_state || { fail "after rmmod xcuda-front: $(states)"; return; }
	say "after rmmod xcuda-front: $(states)"
	[ "$(workers)" = 0 ] || { fail "$(workers) workers left after rmmod xcuda-front"; return; }
	domu_ok 30 "insmod /lib/xcuda/xcuda-front.ko" || { fail "insmod xcuda-front: status $DU_RC $(cat "$W/domu.err")"; return; }
	wait_connected 30 "after insmod xcuda-front" || return
	session_works "after reloading xcuda-front" || return

	xcudad_stop
	run rig-rmmod xcuda_back || { fail "rmmod xcuda-back failed"; xcudad_start; return; }
	wait_for 20 '[ "$(fe_state)" != 4 ]'
	say "after rmmod xcuda-back: $(states)"
	run insmod /lib/xcuda/xcuda-back.ko || { fail "insmod xcuda-back failed"; return; }
	xcudad_start || { fail "xcudad did not start"; return; }
	wait_connected 30 "after insmod xcuda-back" || return
	session_works "after reloading xcuda-back" || return
}

# ------------------------------------------------------------------ 8

sc_hostile() {
	need HOSTILE xcuda-hostile.ko FRONT xcuda-front.ko XCUDACTL xcudactl XCUDAD xcudad || return
	domu_rmmod xcuda_front || return
	wait_for 20 clean_state || { fail "after rmmod xcuda-front: $(states)"; return; }
	domu_ok 30 "insmod /lib/xcuda/xcuda-hostile.ko" || { fail "insmod xcuda-hostile: status $DU_RC $(cat "$W/domu.err")"; return; }
	# its cases run on connect; 150 s for all of them
	domu 240 'i=0; while [ $i -lt 300 ] && ! dmesg | grep -q "xcuda-hostile: DONE"; do sleep 0.5; i=$((i + 1)); done; dmesg | grep -e xcuda-hostile -e "xcuda xcuda-"'
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	ho_done=$(grep 'xcuda-hostile: DONE' "$W/domu.out" | tail -n 1)
	[ -n "$ho_done" ] || say "xcuda-hostile did not finish in 150 s: $(states)"
	domu_rmmod xcuda_hostile
	xcudad_alive || fail "xcudad died"
	wait_for 20 clean_state || fail "after rmmod xcuda-hostile: $(states)"
	ho_why=

	# A ring's worth of SESSION_NEWs whose answers stay on the ring, then
	# data rings filled and left: nothing spins, and once the sessions
	# end, their workers, slots and grants come back.
	ho_full

	# req_prod moved back below what xcuda-back has taken: just behind it
	# (where it meets rsp_prod while an answer is owed, which
	# RING_REQUEST_PROD_OVERFLOW alone lets through) and half the index
	# space away.  The backend disconnects, answers no old slot again,
	# and serves everyone else as before.
	for ho_c in req-prod-back req-prod-wrap; do
		ho_b0=$(dmesg | grep -c 'bogus req_prod')
		ho_named "$ho_c"
		grep -q "PASS $ho_c" "$W/domu.out" && grep -q 'DONE 1 passed, 0 failed' "$W/domu.out" ||
			ho_why="$ho_why $ho_c: $(grep -e "FAIL $ho_c" -e 'DONE' "$W/domu.out" | head -n 1 | sed 's/.*xcuda-hostile: //');"
		[ "$(dmesg | grep -c 'bogus req_prod')" -gt "$ho_b0" ] ||
			ho_why="$ho_why $ho_c: xcuda-back logged no bogus req_prod;"
		dmesg | grep 'bogus req_prod' | tail -n 1 | sed 's/^/RIG:   dom0: /'
		domu_rmmod xcuda_hostile
		wait_for 20 clean_state || { ho_why="$ho_why after $ho_c: $(states);"; break; }
	done
	xcudad_alive || ho_why="$ho_why xcudad died after req-prod-back;"
	LD_LIBRARY_PATH=$OPT/lib timeout 60 xcudactl ping 20 >"$W/ho.ping" 2>&1 ||
		ho_why="$ho_why Dom0's own session failed after req-prod-back: $(tail -n 1 "$W/ho.ping");"

	# Bad xenstore nodes: the backend says what is wrong and never connects
	for ho_k in order5 ref-text no-ref evtchn version ref-guess; do
		case $ho_k in
		order5) ho_want='ring-page-order 5 is above' ;;
		ref-text | no-ref) ho_want='reading .*/ring-ref' ;;
		evtchn) ho_want='binding event channel 1048575' ;;
		version) ho_want='reading .*/version' ;;
		ref-guess) ho_want='mapping the ring' ;;
		esac
		ho_n0=$(dmesg | grep -c -e "$ho_want")
		domu_ok 30 "insmod /lib/xcuda/xcuda-hostile.ko xs_bad=$ho_k" ||
			{ ho_why="$ho_why insmod xs_bad=$ho_k: status $DU_RC;"; break; }
		ho_conn=0
		ho_i=0
		while [ $ho_i -lt 50 ] && [ "$(dmesg | grep -c -e "$ho_want")" = "$ho_n0" ]; do
			[ "$(be_state)" = 4 ] && ho_conn=1
			sleep 0.2
			ho_i=$((ho_i + 1))
		done
		sleep 1
		[ "$(be_state)" = 4 ] && ho_conn=1
		[ "$(dmesg | grep -c -e "$ho_want")" != "$ho_n0" ] || ho_why="$ho_why $ho_k: no '$ho_want';"
		[ $ho_conn = 0 ] || ho_why="$ho_why $ho_k: the backend connected;"
		say "xs_bad=$ho_k: $(dmesg | grep -e "$ho_want" | tail -n 1)"
		domu_rmmod xcuda_hostile
		wait_for 20 clean_state || { ho_why="$ho_why after xs_bad=$ho_k: $(states);"; break; }
	done

	# A SESSION_NEW flood without xcudad: every one refused, none hangs
	xcudad_stop
	domu 150 'n0=$(dmesg | grep -c "xcuda-hostile: DONE"); insmod /lib/xcuda/xcuda-hostile.ko cases=new-flood || exit 1; i=0; while [ $i -lt 200 ] && [ "$(dmesg | grep -c "xcuda-hostile: DONE")" = "$n0" ]; do sleep 0.5; i=$((i + 1)); done; dmesg | grep -e "xcuda-hostile: .*new-flood" -e "xcuda-hostile: DONE" | tail -n 3'
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	grep -q 'no xcudad, every SESSION_NEW refused' "$W/domu.out" &&
		grep -q 'DONE 1 passed, 0 failed' "$W/domu.out" ||
		ho_why="$ho_why new-flood without xcudad: status ${DU_RC:-none}, $(tail -n 1 "$W/domu.out");"
	domu_rmmod xcuda_hostile
	wait_for 20 clean_state || ho_why="$ho_why after new-flood: $(states);"
	xcudad_start || { fail "xcudad did not restart"; return; }
	domu_ok 30 "insmod /lib/xcuda/xcuda-front.ko" || { fail "insmod xcuda-front: status $DU_RC"; return; }
	if ! xcudad_alive; then
		xcudad_start
	fi
	wait_connected 30 "after the hostile frontend" || return
	session_works "after the hostile frontend" || return
	[ -n "$ho_done" ] || { fail "xcuda-hostile did not finish"; return; }
	case $ho_done in
	*" 0 failed"*) ;;
	*) fail "xcuda-hostile: ${ho_done#*DONE }"; return ;;
	esac
	[ -z "$ho_why" ] || fail "xcuda-hostile's single loads:$ho_why"
}

# xcuda-hostile's full-ring and full-data-ring in one load.  full-ring
# holds a ring's worth of answered SESSION_NEWs untaken for 10 s,
# ringing every 20 ms: Dom0's CPU is measured over 4 s of that.  One of
# Dom0's two vCPUs kept busy is 50 %; a backend that took or answered
# anything then, or requeued its work, would show as that; an idle Dom0
# under the rig's emulation shows a few percent.  Afterwards no worker,
# session slot (lingering_sessions) or grant (domain_grants) is left.
HO_FULL_CPU_MAX=25
ho_full() {
	domu 120 "l0=\$(dmesg | wc -l); echo \$l0 >/tmp/ho.l0; insmod /lib/xcuda/xcuda-hostile.ko cases=full-ring,full-data-ring || exit 1; i=0; while [ \$i -lt 200 ] && ! dmesg | tail -n +\$((l0 + 1)) | grep -q -e 'xcuda-hostile: FULL-' -e 'xcuda-hostile: FAIL'; do sleep 0.5; i=\$((i + 1)); done; dmesg | tail -n +\$((l0 + 1)) | grep 'xcuda-hostile: FULL-'"
	hf_hold=$(grep 'FULL-HOLD' "$W/domu.out")
	hf_c0=$(cpu_ticks)
	hf_i0=$(be_irqs)
	hf_s0=$(be_xb spurious_events)
	sleep 4
	hf_c1=$(cpu_ticks)
	hf_i1=$(be_irqs)
	hf_s1=$(be_xb spurious_events)
	hf_w=$(workers)
	hf_g=$(gl_sys domain_grants)
	# shellcheck disable=SC2046 # two numbers
	set -- $(cpu_pct "$hf_c0" "$hf_c1")
	hf_cpu=$1
	echo "RIG-FULL: dom0_cpu=$1% (kernel $3%) steal=$2% over 4 s with the control ring full; xcuda-back interrupts $((hf_i1 - hf_i0)), spurious events $((hf_s1 - hf_s0)); $hf_w workers, ${hf_g:-?} grants held"
	domu 150 "l0=\$(cat /tmp/ho.l0); i=0; while [ \$i -lt 240 ] && ! dmesg | tail -n +\$((l0 + 1)) | grep -q 'xcuda-hostile: DONE'; do sleep 0.5; i=\$((i + 1)); done; dmesg | tail -n +\$((l0 + 1)) | grep 'xcuda-hostile: '"
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	grep -q 'PASS full-ring' "$W/domu.out" && grep -q 'PASS full-data-ring' "$W/domu.out" &&
		grep -q 'DONE 2 passed, 0 failed' "$W/domu.out" ||
		ho_why="$ho_why full rings: $(grep -e 'FAIL' -e 'DONE' "$W/domu.out" | head -n 1 | sed 's/.*xcuda-hostile: //');"
	[ -n "$hf_hold" ] || ho_why="$ho_why full-ring never held its ring full;"
	[ "$hf_w" -gt 0 ] && [ "${hf_g:-0}" -gt 0 ] ||
		ho_why="$ho_why Dom0 was measured outside full-ring's hold ($hf_w workers, ${hf_g:-?} grants);"
	[ "$hf_cpu" -le "$HO_FULL_CPU_MAX" ] ||
		ho_why="$ho_why Dom0 busy $hf_cpu% while the control ring sat full (more than $HO_FULL_CPU_MAX%);"
	wait_workers 30 -eq 0 || ho_why="$ho_why $(workers) workers left after the full rings;"
	wait_for 30 '[ "$(gl_sys domain_grants)" = 0 ] && [ "$(gl_sys lingering_sessions)" = 0 ]' ||
		ho_why="$ho_why after the full rings: domain_grants $(gl_sys domain_grants), lingering_sessions $(gl_sys lingering_sessions);"
	say "after the full rings: $(workers) workers, domain_grants $(gl_sys domain_grants), lingering_grants $(gl_sys lingering_grants), lingering_sessions $(gl_sys lingering_sessions)"
	domu_rmmod xcuda_hostile
	wait_for 20 clean_state || ho_why="$ho_why after the full rings: $(states);"
}

# ------------------------------------------------------------------ 9

sc_destroy() {
	need BACK xcuda-back.ko FRONT xcuda-front.ko XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	ds_w0=$(workers)
	bg_start hold9a "$XCUDACTL hold 120" || { fail "could not start xcudactl hold"; return; }
	bg_start hold9b "$XCUDACTL hold 120" || { fail "could not start xcudactl hold"; return; }
	wait_workers 30 -ge $((ds_w0 + 2)) || { fail "no workers for the sessions ($(workers))"; return; }
	say "$(workers) workers; xl destroy $DOMID"
	ds_old=$DOMID
	run timeout 60 xl destroy "$DOMID" || { fail "xl destroy failed"; return; }
	DOMID=
	wait_workers 20 -eq 0 || { fail "$(workers) workers left 20 s after xl destroy"; return; }
	run timeout 30 xcuda-xl gc || { fail "xcuda-xl gc failed"; return; }
	! xenstore-exists "/local/domain/0/backend/xcuda/$ds_old" 2>/dev/null ||
		{ fail "backend/xcuda/$ds_old still exists after gc"; return; }
	# a domain whose pages Dom0 still maps lingers as a zombie
	if ! wait_for 20 '[ "$(xl list | wc -l)" -le 2 ]'; then
		xl list | sed 's/^/RIG:   /'
		fail "domain $ds_old lingers after xl destroy (pages still mapped?)"
		return
	fi
	xcudad_stop
	[ -z "$(xcuda_back_users)" ] || { fail "processes still hold /dev/xcuda-back: $(xcuda_back_users)"; return; }
	run rmmod xcuda_back || { fail "rmmod xcuda-back failed after the domain was destroyed"; return; }
	run insmod /lib/xcuda/xcuda-back.ko || { fail "insmod xcuda-back failed"; return; }
	xcudad_start || { fail "xcudad did not start"; return; }
	domu_create "${DOMU_NAME}2" || { fail "a new DomU did not come up"; return; }
	wait_connected 30 "the new DomU" || return
	if ! domu_ok 120 "$XCUDACTL echo 1M"; then
		fail "a session in the new DomU failed (status $DU_RC)"
		return
	fi
}

# ------------------------------------------------------------------ 10

# xcuda-xl detach and attach on a running guest (the DomU of scenario 9
# when it ran), with a live session: the session ends with an error, not
# a hang, and the device comes back.
sc_hotplug() {
	need BACK xcuda-back.ko FRONT xcuda-front.ko XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	bg_start hold10 "$XCUDACTL hold 60" || { fail "could not start xcudactl hold"; return; }
	wait_workers 30 -ge 1 || { fail "no worker for the session"; return; }
	# As libxl removes a PV device (and xcuda-xl detach does): online=0,
	# backend Closing.  Once the frontend has closed, the backend must
	# let its device go (device_unregister, as blkback does), not offer
	# the frontend a new connection.  Its device in sysfs says which.
	hp_be=/local/domain/0/backend/xcuda/$DOMID/0
	hp_dev=/sys/bus/xen-backend/devices/xcuda-$DOMID-0
	[ -e "$hp_dev" ] || { fail "no backend device $hp_dev"; return; }
	run xenstore-write "$hp_be/online" 0 "$hp_be/state" 5
	if ! wait_for 15 '[ ! -e "$hp_dev" ]'; then
		fail "after online=0 and Closing, xcuda-back kept its device ($(states)): once the frontend is Closed and online is 0 it must unregister it"
	fi
	say "after online=0 and Closing: $(states)"
	say "+ xcuda-xl detach $DOMID"
	timeout 60 xcuda-xl detach "$DOMID" >"$W/detach.out" 2>&1
	hp_rc=$?
	cat "$W/detach.out"
	[ "$hp_rc" = 0 ] || { fail "xcuda-xl detach: status $hp_rc"; return; }
	! xenstore-exists "/local/domain/$DOMID/device/xcuda/0" 2>/dev/null ||
		{ fail "the frontend's nodes are still there"; return; }
	! xenstore-exists "/local/domain/0/backend/xcuda/$DOMID" 2>/dev/null ||
		{ fail "the backend's nodes are still there"; return; }
	wait_workers 20 -eq 0 || { fail "$(workers) workers left after detach"; return; }
	domu 40 'i=0; while [ ! -s /tmp/hold10.rc ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done; echo "status $(cat /tmp/hold10.rc 2>/dev/null)"; cat /tmp/hold10.out'
	sed 's/^/RIG:   /' "$W/domu.out"
	grep -qx 'status 3' "$W/domu.out" ||
		{ fail "the session's process did not end with status 3 after detach"; return; }
	run xcuda-xl attach "$DOMID" 'sessions=4, arena=128M' || { fail "xcuda-xl attach failed"; return; }
	wait_connected 30 "after xcuda-xl attach" || return
	run xcuda-xl list
	[ "$(xsr "/local/domain/0/backend/xcuda/$DOMID/0/max-sessions")" = 4 ] ||
		{ fail "max-sessions is not the attached 4"; return; }
	session_works "after xcuda-xl attach" || return
}

# ------------------------------------------------------------------ 11

# RIG_PINGPONG round trips on one data ring: 7 in 10 with this side
# spinning for its answers while the worker naps between random pauses,
# 3 in 10 with this side sleeping on every answer (XCUDA_SPIN_US=0),
# which costs three times as long under emulation.  A lost wake-up hangs
# a call, which the program reports after 10 s.
sc_pingpong() {
	need RING_TEST xcuda-ring-test XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	pp_all=${RIG_PINGPONG:-1000000}
	pp_sleep=$((pp_all * 3 / 10))
	for pp_env in "" "XCUDA_SPIN_US=0"; do
		pp_n=$((pp_all - pp_sleep))
		[ -z "$pp_env" ] || pp_n=$pp_sleep
		domu 1800 "$pp_env $RING_TEST pingpong $pp_n 0x${#pp_env}5eed"
		sed 's/^/RIG:   /' "$W/domu.out" "$W/domu.err"
		[ "$DU_RC" = 0 ] && grep -q "^pingpong ok: $pp_n round trips" "$W/domu.out" ||
			{ fail "pingpong ${pp_env:-spinning}: status ${DU_RC:-none}: $(head -n 1 "$W/domu.out")"; return; }
	done
	wait_workers 20 -eq 0 || fail "$(workers) workers left"
}

# ------------------------------------------------------------------ 12

# A process that breaks its own data ring loses its session, and only
# it: another process's session, open all along, still works.
sc_corrupt_ring() {
	need RING_TEST xcuda-ring-test XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	bg_start hold12 "$XCUDACTL hold 40" || { fail "could not start xcudactl hold"; return; }
	wait_workers 30 -ge 1 || { fail "no worker for the other session"; return; }
	cr_w=$(workers)
	domu 60 "$RING_TEST corrupt"
	sed 's/^/RIG:   /' "$W/domu.out" "$W/domu.err"
	[ "$DU_RC" = 0 ] && grep -q '^corrupt ok' "$W/domu.out" ||
		{ fail "corrupt: status ${DU_RC:-none}: $(tail -n 1 "$W/domu.out")"; return; }
	grep -q 'broke the ring\|bogus\|EPROTO\|protocol' "$XCUDAD_LOG" ||
		say "note: xcudad logged nothing about the broken ring"
	wait_workers 20 -eq "$cr_w" || { fail "$(workers) workers, $cr_w with the other session alone"; return; }
	domu_ok 60 "wait_rc() { [ -e /tmp/hold12.rc ]; }; while ! wait_rc; do sleep 1; done; cat /tmp/hold12.rc /tmp/hold12.out" ||
		{ fail "the other session: status ${DU_RC:-none}"; return; }
	sed 's/^/RIG:   /' "$W/domu.out"
	[ "$(head -n 1 "$W/domu.out")" = 0 ] || { fail "the other session failed: $(tail -n 1 "$W/domu.out")"; return; }
	session_works "after the corrupt ring" || return
}

# ------------------------------------------------------------------ 13

# The upstream link inside Dom0: a second xcudad stands for the GPU
# server (--listen on the loopback), and the guests' xcudad relays every
# session to it (--upstream).  The DomU's path is then DomU -> grant ring
# -> relay worker -> TCP -> the server's worker -> the real runtime.
UP_PORT=7700
UP_LOG=/var/log/xcudad-upstream.log
UPPID=
up_start() { # KEYFILE
	# the initramfs brings no interface up, not even the loopback
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
	xcudad -v --no-xen --socket /run/xcuda/upstream.sock \
		--listen "127.0.0.1:$UP_PORT" --key "$1" >>"$UP_LOG" 2>&1 &
	UPPID=$!
	sleep 1
	kill -0 "$UPPID" 2>/dev/null || { say "the upstream xcudad died at start: $(tail -n 3 "$UP_LOG")"; UPPID=; return 1; }
}
up_stop() {
	[ -n "$UPPID" ] || return 0
	kill -9 "$UPPID" 2>/dev/null
	wait "$UPPID" 2>/dev/null
	UPPID=
}
# up_relay KEYFILE: the guests' xcudad again, relaying to the upstream.
up_relay() {
	xcudad_stop
	xcudad_start --upstream "127.0.0.1:$UP_PORT" --key "$1"
}
up_restore() {
	up_stop
	xcudad_stop
	xcudad_start
}

sc_upstream() {
	need XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	mkdir -p /etc/xcuda
	head -c 48 /dev/urandom >/etc/xcuda/up.key
	head -c 48 /dev/urandom >/etc/xcuda/wrong.key
	chmod 600 /etc/xcuda/up.key /etc/xcuda/wrong.key
	up_start /etc/xcuda/up.key || { fail "no upstream xcudad"; return; }
	up_relay /etc/xcuda/up.key || { up_restore; fail "no relaying xcudad"; return; }

	domu 300 "$XCUDACTL echo 1 4096 1M 16M && $XCUDACTL ping 200"
	sed 's/^/RIG:   /' "$W/domu.out" "$W/domu.err"
	for s in 1 4096 1M 16M; do
		grep -qx "echo $s ok" "$W/domu.out" || { up_restore; fail "through the upstream: no 'echo $s ok'"; return; }
	done
	# every CUDA test program, through the upstream now
	sc_cuda_compare
	[ -z "$SC_WHY" ] || { up_restore; return; }

	# the upstream vanishes mid-session: a clear error, no hang
	bg_start hold13 "$XCUDACTL hold 60" || { up_restore; fail "could not start xcudactl hold"; return; }
	wait_workers 30 -ge 1 || { up_restore; fail "no relay worker for the session"; return; }
	sleep 2
	say "kill -9 the upstream xcudad ($UPPID)"
	up_stop
	domu 60 'i=0; while [ ! -s /tmp/hold13.rc ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i + 1)); done; echo "status $(cat /tmp/hold13.rc 2>/dev/null) after $((i * 100)) ms"; cat /tmp/hold13.out'
	sed 's/^/RIG:   /' "$W/domu.out"
	up_st=$(sed -n 's/^status \([0-9]*\) after.*/\1/p' "$W/domu.out")
	[ "$up_st" = 3 ] && grep -q '^hold: session lost: ' "$W/domu.out" ||
		{ up_restore; fail "with the upstream gone, xcudactl hold ended with status '${up_st:-none}' within 40 s"; return; }

	# a relay with the wrong key is refused: a clear error, no hang
	up_start /etc/xcuda/up.key || { up_restore; fail "no upstream xcudad"; return; }
	up_relay /etc/xcuda/wrong.key || { up_restore; fail "no relaying xcudad"; return; }
	domu 60 "$XCUDACTL echo 4096"
	sed 's/^/RIG:   /' "$W/domu.out" "$W/domu.err"
	[ -n "$DU_RC" ] && [ "$DU_RC" != 0 ] || { up_restore; fail "with the wrong key: echo status ${DU_RC:-none}, not a failure"; return; }
	grep -qi 'key\|mac\|auth' "$UP_LOG" || { up_restore; fail "the upstream logged no refusal"; return; }
	grep -i 'key\|mac\|auth' "$UP_LOG" | tail -n 2 | sed 's/^/RIG:   upstream: /'

	up_restore || { fail "xcudad did not restart"; return; }
	session_works "after the upstream" || return
}

# ------------------------------------------------------------------ 14

# A guest kernel that maps its sessions' grants, ends the sessions and
# asks for new ones without ever unmapping (xcuda-hostile's linger-loop).
# xcuda-back must keep each ended session charged, to its slot and to
# the domain's grant budget, until its grants really end, and refuse new
# sessions beyond either (-ENOSPC, -EDQUOT): what Dom0 holds for the
# domain stays within the budget.  Once the guest unmaps, all of it comes
# back and sessions work again.  The budget is lowered to GL_BUDGET
# grants (about 3 sessions of 1 MiB) for the test.
GL_BUDGET=1024
GL_PARAM=/sys/module/xcuda_back/parameters/max_domain_grants
gl_sys() { cat "/sys/bus/xen-backend/devices/xcuda-$DOMID-0/$1" 2>/dev/null; }
gl_restore() {
	[ -z "$gl_old" ] || echo "$gl_old" >"$GL_PARAM"
}
sc_grant_linger() {
	need HOSTILE xcuda-hostile.ko FRONT xcuda-front.ko XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	gl_old=$(cat "$GL_PARAM" 2>/dev/null)
	if [ -n "$gl_old" ]; then
		echo "$GL_BUDGET" >"$GL_PARAM"
		say "grant budget: $GL_BUDGET per domain (was $gl_old)"
	else
		say "xcuda-back has no grant budget ($GL_PARAM)"
	fi
	gl_k0=$(dmesg | wc -l)
	domu_rmmod xcuda_front || { gl_restore; return; }
	wait_for 20 clean_state || { gl_restore; fail "after rmmod xcuda-front: $(states)"; return; }
	domu_ok 30 "insmod /lib/xcuda/xcuda-hostile.ko cases=linger-loop" ||
		{ gl_restore; fail "insmod xcuda-hostile: status $DU_RC $(cat "$W/domu.err")"; return; }
	# about a second a session, 40 at most; then it holds them 15 s
	domu 300 'i=0; while [ $i -lt 560 ] && ! dmesg | grep -q "xcuda-hostile: HOLDING"; do sleep 0.5; i=$((i + 1)); done; dmesg | grep "xcuda-hostile: HOLDING"'
	gl_hold=$(grep 'xcuda-hostile: HOLDING' "$W/domu.out" | tail -n 1)
	gl_held=$(gl_sys domain_grants)
	gl_ling=$(gl_sys lingering_grants)
	gl_sess=$(gl_sys lingering_sessions)
	say "${gl_hold:-the hostile frontend never held its sessions}"
	say "meanwhile xcuda-back charges ${gl_held:-?} grants to domain $DOMID, ${gl_ling:-?} of them of ${gl_sess:-?} ended sessions the guest still maps; all domains: $(cat /sys/class/misc/xcuda-back/grants 2>/dev/null || echo '?')"
	domu 60 'i=0; while [ $i -lt 100 ] && ! dmesg | grep -q "xcuda-hostile: DONE"; do sleep 0.5; i=$((i + 1)); done; dmesg | grep -e xcuda-hostile'
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	gl_done=$(grep 'xcuda-hostile: DONE' "$W/domu.out" | tail -n 1)
	gl_why=$(grep 'FAIL linger-loop' "$W/domu.out" | sed 's/.*FAIL linger-loop: //')
	# the guest has unmapped: xcuda-back's retries end every grant
	wait_for 30 '[ "$(gl_sys domain_grants)" = 0 ]' ||
		say "$(gl_sys domain_grants) grants still charged to domain $DOMID 30 s after the guest unmapped"
	gl_after=$(gl_sys domain_grants)
	dmesg | tail -n +$((gl_k0 + 1)) | grep -e 'budget' -e 'still maps' | tail -n 4 | sed 's/^/RIG:   dom0: /'
	gl_restore
	domu_rmmod xcuda_hostile
	wait_for 20 clean_state || fail "after rmmod xcuda-hostile: $(states)"
	domu_ok 30 "insmod /lib/xcuda/xcuda-front.ko" || { fail "insmod xcuda-front: status $DU_RC"; return; }
	wait_connected 30 "after the lingering grants" || return
	session_works "after the lingering grants" || return
	[ -n "$gl_done" ] || { fail "xcuda-hostile did not finish"; return; }
	case $gl_done in
	*" 0 failed"*) ;;
	*) fail "xcuda-hostile: ${gl_done#*DONE }: $gl_why"; return ;;
	esac
	[ -n "$gl_held" ] || { fail "no domain_grants in xcuda-back's device in sysfs"; return; }
	[ "$gl_held" -le "$GL_BUDGET" ] || { fail "$gl_held grants charged to the domain, over its budget of $GL_BUDGET"; return; }
	[ "${gl_ling:-0}" -gt 0 ] || { fail "no lingering grants counted while the guest held them"; return; }
	[ "$gl_after" = 0 ] || { fail "$gl_after grants still charged after the guest unmapped"; return; }
}

# ------------------------------------------------------------------ 15

# A backend that floods the guest's control channel: xcuda-flood.ko
# sends events through xcuda-back's binding of it for 5 s.  xcuda-front
# binds its channels late-EOI and reports the events that brought
# nothing as spurious, so the guest's kernel holds the next ones back:
# the guest takes a few interrupts, not one per event.  Linux (6.1)
# delays the EOI after the second spurious event in a row, and its
# delayed EOI starts the count over, so a flood still gets through twice
# a jiffy at most: 2500 in 5 s at Debian's HZ=250.  Under the rig's
# emulation the DomU took 162 and 1195 with late EOI, 8640 without.
EF_MAX=2500
# ef_count FILE: the interrupts of the line of xcuda-front in FILE (a
# copy of /proc/interrupts), summed over the CPUs.
ef_count() {
	awk '$NF == "xcuda-front" { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n; exit }' "$1"
}
sc_event_flood() {
	need FLOOD xcuda-flood.ko FRONT xcuda-front.ko XCUDACTL xcudactl XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	ef_irq=$(awk '$NF == "xcuda-back" { sub(":", "", $1); print $1; exit }' /proc/interrupts)
	[ -n "$ef_irq" ] || { fail "no xcuda-back line in Dom0's /proc/interrupts"; return; }
	domu 30 'grep -e xcuda-front /proc/interrupts'
	ef_n0=$(ef_count "$W/domu.out")
	ef_line=$(grep xcuda-front "$W/domu.out")
	run insmod /lib/xcuda/xcuda-flood.ko irq="$ef_irq" ms=5000 ||
		{ fail "insmod xcuda-flood: status $run_rc"; return; }
	run rmmod xcuda_flood
	dmesg | grep 'xcuda-flood:' | tail -n 1 | sed 's/^/RIG:   dom0: /'
	sleep 2
	domu 30 'grep -e xcuda-front /proc/interrupts'
	ef_n1=$(ef_count "$W/domu.out")
	[ -n "$ef_n0" ] && [ -n "$ef_n1" ] || { fail "no xcuda-front line in the DomU's /proc/interrupts"; return; }
	say "the DomU took $((ef_n1 - ef_n0)) interrupts on its control channel during the flood ($ef_line)"
	# a session's doorbell is bound the same way
	bg_start hold15 "XCUDA_ARENA_MB=2 $XCUDACTL hold 120" || { fail "could not start xcudactl hold"; return; }
	wait_workers 30 -ge 1 || { fail "no worker for the session"; return; }
	domu 30 'grep -e xcuda-session /proc/interrupts'
	ef_sess=$(grep xcuda-session "$W/domu.out" | head -n 1)
	say "a session's channel: $ef_sess"
	domu 20 'kill $(cat /tmp/hold15.pid)'
	wait_workers 30 -eq 0 || { fail "$(workers) workers left after the session ended"; return; }
	session_works "after the flood" || return
	[ $((ef_n1 - ef_n0)) -le "$EF_MAX" ] ||
		{ fail "$((ef_n1 - ef_n0)) interrupts on the control channel in the DomU during the flood, more than $EF_MAX: its events are not throttled (late EOI)"; return; }
	case $ef_line in
	*xen-dyn-lateeoi*) ;;
	*) fail "xcuda-front's control channel is not bound late-EOI: $ef_line"; return ;;
	esac
	case $ef_sess in
	*xen-dyn-lateeoi*) ;;
	*) fail "a session's channel is not bound late-EOI: $ef_sess"; return ;;
	esac
	sc_event_storm
}

# The other way round: the guest's kernel storms xcuda-back's control
# channel (xcuda-hostile.ko storm_ms=, beside xcuda-front) while a
# process of the same guest keeps making round trips (xcudactl ping, a
# new session each time: SESSION_NEW and SESSION_END on the storming
# control ring, ECHOs on the session's data ring).  Dom0 is measured
# over ES_SECS with the storm and, before it, over ES_SECS without:
# its busy share from /proc/stat, its interrupts on xcuda-back's line
# and the xenbus device's spurious events.  Requests must keep flowing:
# every ping ends ok within 30 s.  xcuda-back binds the channel late
# EOI and reports the events that bring nothing as spurious, so Linux
# holds the next ones back: Dom0 takes at most two interrupts a jiffy
# (HZ 250: 500 a second; ES_IRQ_MAX allows 600, the pings' own requests
# included).  Without that (EOIs never reported spurious), Dom0 took
# 205096 in 16.8 s here, and pings slowed to a p99 of 0.9 s: that is the
# check that catches a storm let through.  Dom0's busy share did not
# rise then (26 %, 46 % without the storm): under the rig's emulation
# the storming vCPU takes its time from Dom0's (41 % stolen).  The CPU
# bound is for a backend that spins instead: one of Dom0's two vCPUs
# kept busy is 50 points above the baseline; ES_CPU_MAX allows half.
ES_SECS=10
ES_STORM_MS=30000
ES_IRQ_MAX=600
ES_CPU_MAX=25
# es_window LABEL: pings in the DomU for ES_SECS, Dom0 measured meanwhile;
# sets ES_CPU, ES_STEAL, ES_IRQS, ES_SPUR, ES_DS (tenths of a second),
# ES_RUNS (pings of ES_N round trips that ended ok), ES_RC, ES_LAST.
ES_N=100
es_window() {
	es_label=$1
	es_c0=$(cpu_ticks)
	es_i0=$(be_irqs)
	es_s0=$(be_xb spurious_events)
	es_t0=$(now_ds)
	domu $((ES_SECS + 60)) "t0=\$(cut -d' ' -f1 /proc/uptime); end=\$((\${t0%.*} + $ES_SECS)); n=0; rc=0; while [ \$(cut -d. -f1 /proc/uptime) -lt \$end ]; do timeout 30 env $XCUDACTL ping $ES_N >/tmp/es.out 2>&1 || { rc=\$?; break; }; n=\$((n + 1)); done; echo \"runs \$n status \$rc\"; grep -e '^ping' /tmp/es.out | head -n 1"
	es_t1=$(now_ds)
	es_c1=$(cpu_ticks)
	es_i1=$(be_irqs)
	es_s1=$(be_xb spurious_events)
	ES_DS=$((es_t1 - es_t0))
	ES_IRQS=$((es_i1 - es_i0))
	ES_SPUR=$((es_s1 - es_s0))
	# shellcheck disable=SC2046 # two numbers
	set -- $(cpu_pct "$es_c0" "$es_c1")
	ES_CPU=$1
	ES_STEAL=$2
	ES_KERN=$3
	ES_RC=$(sed -n 's/^runs [0-9]* status \([0-9]*\)$/\1/p' "$W/domu.out")
	ES_RUNS=$(sed -n 's/^runs \([0-9]*\) status .*/\1/p' "$W/domu.out")
	ES_LAST=$(tail -n 1 "$W/domu.out")
	echo "RIG-STORM: $es_label dom0_cpu=$ES_CPU% (kernel $ES_KERN%) steal=$ES_STEAL% pings=$((${ES_RUNS:-0} * ES_N)) in $((ES_DS / 10)).$((ES_DS % 10)) s (${ES_RUNS:-0} sessions) dom0_irqs=$ES_IRQS spurious=$ES_SPUR; $ES_LAST"
}
sc_event_storm() {
	need HOSTILE xcuda-hostile.ko || return
	es_window baseline
	[ "$ES_RC" = 0 ] && [ "${ES_RUNS:-0}" -gt 0 ] ||
		{ fail "pings without a storm: status ${ES_RC:-none}, ${ES_RUNS:-0} runs: $ES_LAST"; return; }
	es_base=$ES_CPU
	domu_ok 30 "insmod /lib/xcuda/xcuda-hostile.ko storm_ms=$ES_STORM_MS" ||
		{ fail "insmod xcuda-hostile storm_ms: status $DU_RC $(cat "$W/domu.err")"; return; }
	es_window storm
	domu 30 'dmesg | grep -e "xcuda-hostile: STORM"'
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	es_early=$(grep -c 'STORM-DONE' "$W/domu.out")
	domu_rmmod xcuda_hostile
	domu 20 'dmesg | grep "xcuda-hostile: STORM-DONE" | tail -n 1'
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	grep -q 'STORM-DONE sent' "$W/domu.out" ||
		{ fail "the storm did not run: $(cat "$W/domu.out")"; return; }
	[ "$ES_RC" = 0 ] && [ "${ES_RUNS:-0}" -gt 0 ] ||
		{ fail "requests stopped flowing under the storm: status ${ES_RC:-none} after ${ES_RUNS:-0} pings of $ES_N: $ES_LAST"; return; }
	[ "$es_early" = 0 ] || { fail "the storm ended before the pings did: lengthen ES_STORM_MS"; return; }
	es_imax=$((ES_IRQ_MAX * ES_DS / 10))
	[ "$ES_IRQS" -le "$es_imax" ] ||
		{ fail "Dom0 took $ES_IRQS interrupts on xcuda-back in $((ES_DS / 10)) s of storm, more than $es_imax: the storm is not held back (late EOI)"; return; }
	[ "$ES_CPU" -le $((es_base + ES_CPU_MAX)) ] ||
		{ fail "Dom0 busy $ES_CPU% under the storm, $es_base% without: more than $ES_CPU_MAX points above"; return; }
	session_works "after the storm" || return
	sc_session_storm
}

# A process floods its own session's channel (xcuda-ring-test storm: it
# writes to every eventfd it holds, the doorbell among them, in a loop)
# while it keeps making checked round trips on the session.  xcuda-back
# acknowledges an event as spurious while the worker has not read the
# last one (xcuda/xen_doorbell.h), so Linux holds the next ones back:
# about three a jiffy before the worker reads again (HZ 250: 750 a
# second).  Dom0's interrupts on sessions' channels are counted over
# SS_WINDOW seconds of the storm; SS_IRQ_MAX a second is the bound.  The
# writes must outnumber them SS_RATIO times (the storm ran), and the
# round trips must go on.  Here, under emulation (the DomU writes about
# 20,000 times a second): 638 a second; with every event acknowledged
# at once instead, 1753, which fails.
SS_SECS=24
SS_WINDOW=10
SS_IRQ_MAX=1000
SS_RATIO=10
# ss_irqs: the interrupts Dom0 took on sessions' channels so far.
ss_irqs() {
	awk '$NF == "xcuda-session" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts
}
sc_session_storm() {
	need RING_TEST xcuda-ring-test || return
	bg_start storm15 "$RING_TEST storm $SS_SECS" ||
		{ fail "could not start xcuda-ring-test storm"; return; }
	wait_for 60 'domu_ok 10 "grep -q storming /tmp/storm15.out"' ||
		{ fail "the session storm did not start"; return; }
	sleep 2
	ss_i0=$(ss_irqs)
	ss_t0=$(now_ds)
	sleep "$SS_WINDOW"
	ss_i1=$(ss_irqs)
	ss_t1=$(now_ds)
	wait_for $((SS_SECS + 60)) 'domu_ok 10 "[ -e /tmp/storm15.rc ]"' ||
		{ fail "xcuda-ring-test storm did not end"; return; }
	domu 10 "cat /tmp/storm15.rc /tmp/storm15.out"
	sed 's/^/RIG:   domu: /' "$W/domu.out"
	ss_ds=$((ss_t1 - ss_t0))
	ss_n=$((ss_i1 - ss_i0))
	ss_w=$(sed -n 's/^storm ok: \([0-9]*\) eventfd writes.*/\1/p' "$W/domu.out")
	say "RIG-STORM: session channel: dom0_irqs=$ss_n in $((ss_ds / 10)).$((ss_ds % 10)) s; the DomU wrote ${ss_w:-?} times in $SS_SECS s"
	[ "$(head -n 1 "$W/domu.out")" = 0 ] && [ -n "$ss_w" ] ||
		{ fail "round trips under the session storm: $(tail -n 1 "$W/domu.out")"; return; }
	[ $((ss_n * 10)) -le $((SS_IRQ_MAX * ss_ds)) ] ||
		{ fail "Dom0 took $ss_n interrupts on the session's channel in $((ss_ds / 10)) s of storm, more than $SS_IRQ_MAX a second: the storm is not held back"; return; }
	[ $((ss_n * SS_RATIO * SS_SECS)) -le $((ss_w * ss_ds / 10)) ] ||
		{ fail "the DomU wrote only $ss_w times in $SS_SECS s: not a storm"; return; }
	wait_workers 30 -eq 0 || { fail "$(workers) workers left after the session storm"; return; }
	session_works "after the session storm" || return
}

# ------------------------------------------------------------------ 16

# xcuda-badback.ko in place of xcuda-back, one load per case (the
# module's header says what each does): the DomU's kernel must log no
# BUG, Oops, WARNING or trace, xcuda-front must say what it refused
# (bb_want), and the DomU's xcudactl must fail, not hang.  Then the real
# xcuda-back and xcudad come back, the device connects and a session
# works, before the next case.  XCUDA_RIG_BADBACK (mkimages.sh) names
# some cases to run only those.  One "RIG-BADBACK: PASS|FAIL <case>"
# line each.
BB_CASES="nr-large nr-zero nr-huge nr-4g arena-more order-more session-zero status-bad dir-loop dir-short dir-bogus dir-foreign dir-reserved arena-bogus arena-ro closed order-huge rsp-ahead rsp-wrap id-forged id-dup op-wrong len-big early-connect no-versions silent state-cycle"
BB_TROUBLE='BUG:|Oops|WARNING:|general protection|Call Trace|refcount_t'
# silent: one program more than a one-page control ring has slots (8)
BB_SILENT_N=9
# state-cycle: control rings the frontend may hand out while the
# backend keeps every one mapped (the first, and what races with it)
BB_RINGS_MAX=4
BB_CYCLE_S=20
# A frontend backing off after failures waits up to 64 s, twice.
BB_RECONNECT_S=200

# bb_want CASE: what xcuda-front must log in the DomU (grep -E); empty:
# nothing (the program's error says it).
bb_want() {
	case $1 in
	nr-4g | dir-*) echo 'arena directory of session rejected' ;;
	nr-* | arena-more | order-more | session-zero | status-bad) echo 'malformed SESSION_NEW answer' ;;
	arena-*) echo 'cannot map arena grants' ;;
	rsp-*) echo 'response producer .* beyond requests' ;;
	id-* | op-wrong | len-big) echo 'bogus response' ;;
	no-versions) echo 'lacks version' ;;
	silent) echo 'not answered in|no room on the control ring' ;;
	state-cycle) echo 'still maps' ;;
	esac
}
# bb_dom0 CASE: what xcuda-badback must log in Dom0: that the frontend
# unmapped every page of the session before it ended it, or that it
# took the huge ring order as 4.
bb_dom0() {
	case $1 in
	dir-loop | dir-short | dir-foreign | arena-bogus | arena-ro | closed) echo 'SESSION_END [0-9]*: [0-9]* grants ended, 0 still mapped' ;;
	order-huge) echo 'ring of 16 pages mapped' ;;
	esac
}
# bb_env CASE: the DomU program's environment
bb_env() {
	case $1 in
	arena-more) echo "XCUDA_ARENA_MB=1" ;;
	# any arena, as asked for none (xcudactl asks for 2 MiB)
	nr-4g | dir-loop | dir-short) echo "XCUDA_ARENA_MB=0" ;;
	esac
}
# bb_nprog CASE: programs run at once
bb_nprog() {
	case $1 in
	silent) echo "$BB_SILENT_N" ;;
	id-dup) echo 2 ;;
	*) echo 1 ;;
	esac
}
# bb_failed_ok RC: the program failed by itself (not killed by timeout)
bb_failed_ok() {
	case $1 in
	'' | 0 | 124 | 137 | 143) return 1 ;;
	esac
	return 0
}

# bb_one CASE: one load; sets BB_WHY (empty: passed) and BB_NOTE.
bb_one() {
	bb_c=$1
	BB_WHY=
	BB_NOTE=
	bb_k0=$(dmesg | wc -l)
	domu 20 'dmesg | wc -l'
	bb_l0=$(tr -dc 0-9 <"$W/domu.out")
	xcudad_stop
	run rig-rmmod xcuda_back || { BB_WHY="rmmod xcuda-back failed"; return; }
	run insmod /lib/xcuda/xcuda-badback.ko case="$bb_c" cycle_ms=$((BB_CYCLE_S * 1000)) ||
		{ BB_WHY="insmod xcuda-badback: status $run_rc"; return; }
	bb_t0=$(now_ds)
	case $bb_c in
	early-connect | no-versions) sleep 3 ;;
	state-cycle) sleep 5 ;;
	*) wait_for 60 connected || BB_WHY="not Connected to xcuda-badback ($(states));" ;;
	esac
	bb_env=$(bb_env "$bb_c")
	bb_np=$(bb_nprog "$bb_c")
	bb_t1=$(now_ds)
	if [ "$bb_np" -gt 1 ]; then
		# silent: every OPEN must end by itself (60 s), the one that
		# waits for room on the full ring too
		domu 220 "rm -f /tmp/bb.rc.*; i=0; while [ \$i -lt $bb_np ]; do i=\$((i + 1)); ( timeout 150 env $XCUDACTL echo 4096 >/dev/null 2>&1; echo \$? >/tmp/bb.rc.\$i ) & done; wait; cat /tmp/bb.rc.*"
		bb_rcs=$(tr '\n' ' ' <"$W/domu.out")
		BB_NOTE="statuses ${bb_rcs}in $((($(now_ds) - bb_t1) / 10)) s"
		bb_n=0
		for bb_r in $bb_rcs; do
			bb_n=$((bb_n + 1))
			bb_failed_ok "$bb_r" || BB_WHY="$BB_WHY a program ended with status $bb_r (hung until killed, or succeeded);"
		done
		[ "$bb_n" = "$bb_np" ] || BB_WHY="$BB_WHY $bb_n of $bb_np programs answered;"
	else
		domu 150 "timeout 120 env $bb_env $XCUDACTL echo 4096"
		bb_rc=$DU_RC
		BB_NOTE="status $bb_rc in $((($(now_ds) - bb_t1) / 10)) s: $(tail -n 1 "$W/domu.err")"
		bb_failed_ok "$bb_rc" || BB_WHY="$BB_WHY xcudactl echo: status ${bb_rc:-none} (hung until killed, or succeeded);"
	fi
	if [ "$bb_c" = state-cycle ]; then
		# until the cycling is over
		while [ $(($(now_ds) - bb_t0)) -lt $(((BB_CYCLE_S + 3) * 10)) ]; do sleep 1; done
	fi
	# the session's end reaches Dom0 once the process is gone
	bb_d=$(bb_dom0 "$bb_c")
	[ -z "$bb_d" ] || wait_for 20 'dmesg | tail -n +$((bb_k0 + 1)) | grep -q -E "$bb_d"' ||
		BB_WHY="$BB_WHY xcuda-badback did not log '$bb_d';"
	run rig-rmmod xcuda_badback || BB_WHY="$BB_WHY rmmod xcuda-badback failed;"
	bb_sum=$(dmesg | tail -n +$((bb_k0 + 1)) | grep 'xcuda-badback: SUMMARY' | tail -n 1)
	BB_NOTE="$BB_NOTE; ${bb_sum#*xcuda-badback: }"
	if [ "$bb_c" = state-cycle ]; then
		bb_rings=$(echo "$bb_sum" | sed -n 's/.* rings=\([0-9]*\).*/\1/p')
		[ -n "$bb_rings" ] && [ "$bb_rings" -le "$BB_RINGS_MAX" ] ||
			BB_WHY="$BB_WHY the frontend set up ${bb_rings:-?} control rings while the backend kept each mapped (at most $BB_RINGS_MAX);"
	fi

	# the DomU's kernel: what it said, and nothing worse
	domu 30 "dmesg | tail -n +$((bb_l0 + 1))"
	cp "$W/domu.out" "$W/bb.dmesg"
	sed 's/^/RIG:   domu: /' "$W/bb.dmesg" | grep -e xcuda -E -e "$BB_TROUBLE" | tail -n 12
	bb_w=$(bb_want "$bb_c")
	if [ -n "$bb_w" ]; then
		grep -q -E "$bb_w" "$W/bb.dmesg" || BB_WHY="$BB_WHY xcuda-front did not log '$bb_w';"
	fi
	bb_t=$(grep -E "$BB_TROUBLE" "$W/bb.dmesg" | head -n 1)
	[ -z "$bb_t" ] || BB_WHY="$BB_WHY the DomU kernel logged: $bb_t;"

	# the real backend again
	run insmod /lib/xcuda/xcuda-back.ko || { BB_WHY="$BB_WHY insmod xcuda-back failed;"; return; }
	xcudad_start || { BB_WHY="$BB_WHY xcudad did not start;"; return; }
	if ! wait_for "$BB_RECONNECT_S" connected; then
		BB_WHY="$BB_WHY not Connected again after $BB_RECONNECT_S s ($(states));"
		return
	fi
	domu_ok 60 "$XCUDACTL echo 4096" ||
		BB_WHY="$BB_WHY a session failed afterwards (status $DU_RC): $(tail -n 1 "$W/domu.err");"
}

sc_bad_backend() {
	need BADBACK xcuda-badback.ko BACK xcuda-back.ko FRONT xcuda-front.ko XCUDACTL xcudactl XCUDAD xcudad || return
	wait_connected 30 "before the bad backends" || return
	bb_pass=0
	bb_fail=0
	for bb in ${RIG_BADBACK_CASES:-$BB_CASES}; do
		say "--- bad backend: $bb"
		bb_one "$bb"
		if [ -z "$BB_WHY" ]; then
			echo "RIG-BADBACK: PASS $bb ($BB_NOTE)"
			bb_pass=$((bb_pass + 1))
		else
			echo "RIG-BADBACK: FAIL $bb:$BB_WHY ($BB_NOTE)"
			bb_fail=$((bb_fail + 1))
			bb_failed="${bb_failed:-}${bb_failed:+ }$bb"
		fi
		# nothing more can run without the real backend
		if ! connected; then
			fail "the device did not come back after $bb ($(states))"
			return
		fi
	done
	say "bad backends: $bb_pass passed, $bb_fail failed"
	[ "$bb_fail" = 0 ] || fail "$bb_fail bad-backend cases failed: ${bb_failed:-}"
}

# ------------------------------------------------------------------ GPU host

# On a GPU host's rig (RIG_MODE=gpu, gpu-rig.sh): xcudactl ping and the
# benchmark in the DomU (the xen transport, then Dom0's relay and the TCP
# upstream over QEMU's user network) and in Dom0 (the local transport,
# then the same relay and link), in one boot.  Lines RIG-PING, RIG-BENCH
# and RIG-COUNTERS (the relay's: its ring, its link) go to gpu-rig.sh,
# which sets them beside the host's own.
GPU_BENCH="--quick --reps 3 --only launch,pinned"

# gm_counters LABEL: the counters of the sessions that ended since the
# last call, once their workers are gone.
GM_SEEN=0
gm_counters() {
	wait_workers 30 -eq 0 || say "$(workers) workers still running"
	grep 'counters:' "$XCUDAD_LOG" | tail -n +"$((GM_SEEN + 1))" |
		sed "s/^/RIG-COUNTERS: $1: /"
	GM_SEEN=$(grep -c 'counters:' "$XCUDAD_LOG")
}

sc_gpu_measure() {
	need XCUDACTL xcudactl BENCH xcuda-bench || return
	connected || { fail "not Connected ($(states))"; return; }
	GM_SEEN=$(grep -c 'counters:' "$XCUDAD_LOG")
	domu 300 "$XCUDACTL ping 2000"
	sed 's/^/RIG-PING: domU: /' "$W/domu.out"
	gm_counters domU-ping
	grep -q '^ping ok' "$W/domu.out" || { fail "ping in the DomU: status ${DU_RC:-none}: $(cat "$W/domu.err")"; return; }
	LD_LIBRARY_PATH=$OPT/lib timeout 300 xcudactl ping 2000 >"$W/ping0" 2>&1
	sed 's/^/RIG-PING: dom0: /' "$W/ping0"
	gm_counters dom0-ping
	grep -q '^ping ok' "$W/ping0" || { fail "ping in Dom0: $(tail -n 1 "$W/ping0")"; return; }
	domu 900 "LD_LIBRARY_PATH=$OPT/lib $OPT/bench/xcuda-bench $GPU_BENCH"
	sed 's/^/RIG-BENCH: domU: /' "$W/domu.out"
	gm_counters domU-bench
	[ "$DU_RC" = 0 ] || { fail "the benchmark in the DomU: status ${DU_RC:-none}: $(tail -n 2 "$W/domu.err")"; return; }
	# shellcheck disable=SC2086 # the options split
	(cd / && LD_LIBRARY_PATH=$OPT/lib timeout 900 "$OPT/bench/xcuda-bench" $GPU_BENCH) \
		>"$W/bench0" 2>"$W/bench0.err" </dev/null
	gm_rc=$?
	sed 's/^/RIG-BENCH: dom0: /' "$W/bench0"
	gm_counters dom0-bench
	[ "$gm_rc" = 0 ] || fail "the benchmark in Dom0: status $gm_rc: $(tail -n 2 "$W/bench0.err")"
}

# Dom0's view of the GPU host's free memory, in MiB (through xcuda).
ne_free() {
	(cd / && LD_LIBRARY_PATH=$OPT/lib timeout 120 "$OPT/bin/gpu-hold" free) 2>>"$W/ne.err"
}

# A DomU program holds 2 GiB of the GPU host's memory and waits for a
# kernel that never ends; xl destroy: Dom0's worker goes (the backend's
# GONE), the link to the GPU host closes, and there the worker blocked in
# CUDA goes too (its watch sees the link gone), so the memory returns.
sc_never_ending() {
	need HOLD gpu-hold XCUDAD xcudad || return
	connected || { fail "not Connected ($(states))"; return; }
	ne_w0=$(workers)
	ne_f0=$(ne_free) || { fail "gpu-hold free in Dom0: $(tail -n 1 "$W/ne.err")"; return; }
	bg_start hold4 "LD_LIBRARY_PATH=$OPT/lib XCUDA_ARENA_MB=64 $OPT/bin/gpu-hold hold 2048" ||
		{ fail "could not start gpu-hold in the DomU"; return; }
	wait_for 120 'domu_ok 10 "grep -q holding /tmp/hold4.out"' ||
		{ domu 10 "cat /tmp/hold4.out"; fail "gpu-hold did not start: $(cat "$W/domu.out")"; return; }
	sleep 3
	ne_f1=$(ne_free) || { fail "gpu-hold free in Dom0: $(tail -n 1 "$W/ne.err")"; return; }
	say "RIG-HOLD: free MiB before $ne_f0, while held $ne_f1"
	[ "$((ne_f0 - ne_f1))" -ge 2000 ] || { fail "the DomU holds $((ne_f0 - ne_f1)) MiB, not 2048"; return; }
	domu_ok 5 "[ ! -e /tmp/hold4.rc ]" || { fail "the never-ending kernel ended"; return; }
	ne_old=$DOMID
	run timeout 60 xl destroy "$DOMID" || { fail "xl destroy failed"; return; }
	DOMID=
	wait_workers 20 -le "$ne_w0" || { fail "$(workers) workers left 20 s after xl destroy"; return; }
	ne_f2=0
	for _ in $(seq 30); do
		ne_f2=$(ne_free) || ne_f2=0
		[ "$((ne_f0 - ne_f2))" -lt 64 ] && break
		sleep 1
	done
	say "RIG-HOLD: free MiB after xl destroy $ne_f2"
	[ "$((ne_f0 - ne_f2))" -lt 64 ] || { fail "the GPU memory did not return: $ne_f2 MiB free, $ne_f0 before"; return; }
	run timeout 30 xcuda-xl gc || { fail "xcuda-xl gc failed"; return; }
	! xenstore-exists "/local/domain/0/backend/xcuda/$ne_old" 2>/dev/null ||
		{ fail "backend/xcuda/$ne_old still exists after gc"; return; }
	domu_create xcuda-domU2 || { fail "a new DomU did not come up"; return; }
	wait_connected 30 "the new DomU" || return
	session_works "the new DomU" || return
}

run_gpu_scenarios() {
	scenario 1 connect sc_connect
	scenario 2 cuda-compare sc_cuda_compare
	scenario 3 measure sc_gpu_measure
	scenario 4 never-ending sc_never_ending
}

# Scenarios 1 to 10, which every guest type runs (SCENARIOS_GUEST):
# dom0-init.sh's guest_pass runs them with
# RIG_GUEST=pvh or hvm, results named "pvh:NAME" or "hvm:NAME".  What
# they check holds for an auto-translated guest too; its frontend maps
# the arena and data rings into its own page frames, and its events
# come on the HVM callback vector.
run_guest_scenarios() {
	scenario 1 connect sc_connect
	scenario 2 echo sc_echo
	scenario 3 cuda-compare sc_cuda_compare
	scenario 4 parallel sc_parallel
	scenario 5 kill-client sc_kill_client
	scenario 6 kill-daemon sc_kill_daemon
	scenario 7 reload sc_reload
	scenario 8 hostile sc_hostile
	scenario 9 destroy sc_destroy
	scenario 10 hotplug sc_hotplug
}

run_scenarios() {
	run_guest_scenarios
	scenario 11 pingpong sc_pingpong
	scenario 12 corrupt-ring sc_corrupt_ring
	scenario 13 upstream sc_upstream
	scenario 14 grant-linger sc_grant_linger
	scenario 15 event-flood sc_event_flood
	scenario 16 bad-backend sc_bad_backend
}

# ------------------------------------------------------------------ demo

demo() {
	need DEMO "the demo program" GUESTLIB libcudart.so.13 XCUDAD xcudad FRONT xcuda-front.ko BACK xcuda-back.ko || return
	wait_connected 30 "after boot" || return
	dm_log0=$(wc -l <"$XCUDAD_LOG")
	dm_k0=$(dmesg | wc -l)
	domu 120 "ls -l /dev/xcuda; LD_LIBRARY_PATH=$OPT/lib $OPT/demo/demo; echo \"exit status \$?\""
	dm_rc=$DU_RC
	sleep 1
	fe=/local/domain/$DOMID/device/xcuda/0
	be=/local/domain/0/backend/xcuda/$DOMID/0
	tail -n +$((dm_log0 + 1)) "$XCUDAD_LOG" >"$W/demo.xcudad"
	dmesg | tail -n +$((dm_k0 + 1)) | grep 'xcuda-back' >"$W/demo.back"
	dm_worker=$(sed -n 's/.*worker \([0-9]*\) started.*/\1/p' "$W/demo.xcudad" | head -n 1)
	dm_order=$(xsr "$fe/ring-page-order")
	if [ -n "$dm_order" ]; then
		dm_ring="$((1 << dm_order)) pages, grants $(xsr "$fe/ring-ref0")..$(xsr "$fe/ring-ref$(((1 << dm_order) - 1))")"
	else
		dm_ring="1 page, grant $(xsr "$fe/ring-ref")"
	fi
	grep -v '^crw\|^exit status' "$W/domu.out" >"$W/demo.out"
	echo "RIG-DEMO: == the program's output"
	sed 's/^/RIG-DEMO:   /' "$W/demo.out"
	echo "RIG-DEMO: == the hops it took"
	echo "RIG-DEMO:  1. DomU program: $OPT/demo/demo, in DomU $DNAME (domain $DOMID)"
	echo "RIG-DEMO:  2. our libcudart: $(sed -n 's/^libcudart: //p' "$W/domu.out")" \
		"(LD_LIBRARY_PATH=$OPT/lib)"
	echo "RIG-DEMO:  3. /dev/xcuda: $(grep '/dev/xcuda' "$W/domu.out" | awk '{print $1, $5 $6}')," \
		"xcuda-front's device: the library's session"
	echo "RIG-DEMO:  4. xcuda-front: shared ring of $dm_ring, event channel" \
		"$(xsr "$fe/event-channel"), state $(xsr "$fe/state") (Connected)"
	echo "RIG-DEMO:  5. xcuda-back in Dom0: $be, state $(xsr "$be/state"); its log:"
	sed 's/^/RIG-DEMO:        /' "$W/demo.back"
	echo "RIG-DEMO:  6. xcudad worker: pid ${dm_worker:-?} (xcudad is pid $XPID); its log:"
	sed 's/^/RIG-DEMO:        /' "$W/demo.xcudad"
	echo "RIG-DEMO:  7. real libcudart:" \
		"$(grep -o '/[^ ]*libcudart\.so[^ ]*' "/proc/$XPID/maps" 2>/dev/null | head -n 1)" \
		"(xcudad's, which its forked worker called)"
	echo "RIG-DEMO: == result: $(tail -n 1 "$W/domu.out")"
	if [ "$(tail -n 1 "$W/domu.out")" = "exit status 0" ]; then
		echo "RIG-DEMO: the CUDA program ran on the GPU through xcuda, from the DomU"
	else
		echo "RIG-DEMO: no GPU here: the error above came from the real CUDA runtime in Dom0, through every hop"
	fi
	[ "$dm_rc" = 0 ] || fail "the demo command did not run (status $dm_rc)"
	grep -q "^libcudart: $OPT/lib/" "$W/domu.out" || fail "the demo did not load xcuda's libcudart"
	[ -s "$W/demo.back" ] || fail "xcuda-back logged no session"
	[ -n "$dm_worker" ] || fail "xcudad started no worker"
}
