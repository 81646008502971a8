#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /init of the rig's Dom0 (busybox sh, PID 1).  Brings up the Xen
# toolstack, loads xcuda-back, starts xcudad, creates the DomU with
# xcuda-xl, runs the scenarios of /lib/xcuda-rig/scenarios.sh (or the
# demo), prints one "RIG-RESULT: PASS|FAIL ..." line each and ends QEMU
# through isa-debug-exit: 0x10 (QEMU exits 33) if all passed, else 0x11
# (35).
#
# The DomU runs an agent (domU-init.sh) that takes one command at a time
# from its xenstore directory data/xcuda-test/cmd and answers in
# data/xcuda-test/rc; the command's output comes back on the DomU's
# console, whose log xenconsoled keeps here, as lines "XT:<seq>:O:..."
# (stdout) and "XT:<seq>:E:..." (stderr), ended by "XT:<seq>:RC:<status>".
# Every wait has a time limit.
#
# wait_for takes shell code in single quotes, evaluated at each try:
# shellcheck disable=SC2016

export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/usr/lib/xen-4.17/bin
export HOME=/root
# shellcheck source=/dev/null # written by mkimages.sh
. /etc/xcuda-rig.conf

W=/run/rig			# scratch
OPT=/opt/xcuda
MODDIR=/lib/modules/$KVER/xen
XCUDAD_LOG=/var/log/xcudad.log
FAILED=0
PASSED=0

# ------------------------------------------------------------------ helpers

# Uptime in tenths of a second, with no program run.
now_ds() {
	read -r nd_up nd_rest </proc/uptime
	nd_f=${nd_up#*.}
	echo $((${nd_up%.*} * 10 + ${nd_f%?}))
	: "$nd_rest"
}
up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "RIG: [dom0 $(up)s] $*"; }
# upper WORD: WORD in capitals (a guest type as its kernel names it).
upper() { echo "$1" | tr '[:lower:]' '[:upper:]'; }
run() {
	say "+ $*"
	"$@"
	run_rc=$?
	[ "$run_rc" -eq 0 ] || say "status $run_rc from: $*"
	return "$run_rc"
}

# wait_for SECONDS CODE: evaluates the shell code CODE every 0.2 s until
# it succeeds (CODE is a string, so that its $(...) run each time).
wait_for() {
	wf_end=$(($(now_ds) + $1 * 10))
	while :; do
		eval "$2" && return 0
		[ "$(now_ds)" -lt "$wf_end" ] || return 1
		sleep 0.2
	done
}

xsr() { xenstore-read "$1" 2>/dev/null; }

# On a GPU host's rig: QEMU's NIC, and the host's loopback at 10.0.2.2
# through QEMU's user network (which answers no ping).  The host serves
# its native outputs of the CUDA programs there; fetching them proves the
# way.
gpu_net() {
	run insmod "/lib/modules/$KVER/net/e1000.ko" || return 1
	ip link set lo up
	wait_for 30 '[ -e /sys/class/net/eth0 ]' || { say "no eth0"; return 1; }
	run ip addr add 10.0.2.15/24 dev eth0 || return 1
	run ip link set eth0 up || return 1
	mkdir -p "$W/refs"
	# (busybox 1.35's wget -T crashes: timeout instead)
	wait_for 60 'timeout 10 wget -q -O "$W/refs.tar" "$GPU_REFS/refs.tar"' ||
		{ say "the GPU host does not answer at $GPU_REFS"; return 1; }
	run tar -xf "$W/refs.tar" -C "$W/refs" || return 1
	say "network up: $(find "$W/refs" -name '*.native.out' | wc -l) native outputs from the GPU host"
}

# finish: the verdict to QEMU's isa-debug-exit (port 0xf4).
finish() {
	sync
	if [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]; then v='\020'; else v='\021'; fi
	say "RIG-DONE $PASSED passed, $FAILED failed"
	sleep 1
	# shellcheck disable=SC2059 # the byte is the format
	printf "$v" | dd of=/dev/port bs=1 seek=244 count=1 conv=notrunc 2>/dev/null
	sleep 2
	say "isa-debug-exit did not stop QEMU; rebooting"
	reboot -f
}

# ------------------------------------------------------------------ xcudad

XPID=
# xcudad_start [OPTION...]: the daemon that serves the guests.
xcudad_start() {
	[ "$HAVE_XCUDAD" = 1 ] || return 1
	xcudad -v "$@" >>"$XCUDAD_LOG" 2>&1 &
	XPID=$!
	# ready once it holds /dev/xcuda-back open (its control file)
	if [ -e /dev/xcuda-back ]; then
		if ! wait_for 15 xcudad_ready; then
			say "xcudad (pid $XPID) did not open /dev/xcuda-back"
			return 1
		fi
	else
		sleep 1
	fi
	kill -0 "$XPID" 2>/dev/null || { say "xcudad died at start"; XPID=; return 1; }
	say "xcudad running, pid $XPID"
}
xcudad_ready() {
	xcuda_back_users | grep -qx "$XPID"
}
xcudad_stop() {
	[ -n "$XPID" ] || return 0
	kill -TERM "$XPID" 2>/dev/null
	wait_for 15 xcudad_gone || { say "xcudad ignored SIGTERM"; kill -9 "$XPID"; }
	wait "$XPID" 2>/dev/null
	XPID=
}
xcudad_gone() { ! kill -0 "$XPID" 2>/dev/null; }

# workers: how many children xcudad has (one per session).
workers() {
	wk_n=0
	[ -n "$XPID" ] || { echo 0; return; }
	for wk_s in /proc/[0-9]*/stat; do
		read -r wk_l <"$wk_s" 2>/dev/null || continue
		# the command name may hold spaces: the fields follow the last ')'
		# shellcheck disable=SC2086 # split into fields
		set -- ${wk_l##*) }
		[ "${2:-}" = "$XPID" ] && wk_n=$((wk_n + 1))
	done
	echo "$wk_n"
}
# xcuda_back_users: the processes that hold /dev/xcuda-back open.
xcuda_back_users() {
	# busybox here has no fuser; ls -l of many fd directories heads each
	# with "/proc/PID/fd:"
	# shellcheck disable=SC2012 # the link targets are the point
	ls -l /proc/[0-9]*/fd 2>/dev/null | awk -F/ '
		/^\/proc\/[0-9]+\/fd:$/ { pid = $3 }
		/ -> \/dev\/xcuda-back$/ { print pid }' | sort -u
}

# ------------------------------------------------------------------ DomU

DOMID=
DNAME=
CLOG=
XT=
SEQ=0
RELAY=

# The guest type of this pass: pv, then pvh and hvm (guest_pass), each
# with its configuration and the name of its first DomU (sc_destroy
# makes NAME2).
RIG_GUEST=pv
DOMU_CFG=/etc/xen/xcuda-domU.cfg
DOMU_NAME=xcuda-domU
# An HVM DomU's emulated serial port (its xl config says where) and its
# device model's log, relayed too.
HVM_SERIAL=/var/log/xen/hvm-serial.log
SRELAY=

# domu_create NAME [KEY=VALUE...]: xcuda-xl create, then wait for the agent.
domu_create() {
	DNAME=$1
	shift
	CLOG=/var/log/xen/console/guest-$DNAME.log
	dc_ok=1
	dc_t0=$(now_ds)
	run timeout 240 xcuda-xl create "$DOMU_CFG" "name=\"$DNAME\"" "$@" || dc_ok=0
	[ -z "$SRELAY" ] || kill "$SRELAY" 2>/dev/null
	SRELAY=
	if [ "$RIG_GUEST" = hvm ]; then
		# what the device model said, then the guest's serial port
		# from here on
		sed "s/^/QEMU-DM| /" "/var/log/xen/qemu-dm-$DNAME.log" 2>/dev/null
		tail -n +1 -f "$HVM_SERIAL" 2>/dev/null | sed "s/^/DOMU-SERIAL| /" &
		SRELAY=$!
	fi
	if [ "$dc_ok" = 0 ]; then
		DOMID=
		return 1
	fi
	DOMID=$(xl domid "$DNAME" 2>/dev/null)
	XT=/local/domain/$DOMID/data/xcuda-test
	say "DomU $DNAME is domain $DOMID"
	wait_for 10 '[ -e "$CLOG" ]'
	[ -z "$RELAY" ] || kill "$RELAY" 2>/dev/null
	# the DomU's console into the serial log (busybox sed has no -u;
	# it flushes per line on its own)
	tail -n +1 -f "$CLOG" 2>/dev/null | sed "s/^/DOMU| /" &
	RELAY=$!
	# a PVH kernel boots slower under the rig's emulation, and an HVM
	# one slower still: hvmloader and SeaBIOS first, its devices
	# emulated by QEMU in Dom0
	dc_t=300
	[ "$RIG_GUEST" != hvm ] || dc_t=1200
	# (a DomU that crashed meanwhile ends the wait)
	wait_for "$dc_t" '[ -n "$(xsr "$XT/ready")" ] || domu_dead_5s'
	if [ -z "$(xsr "$XT/ready")" ]; then
		say "the DomU agent did not start ($(xl list "$DOMID" 2>&1 | tail -n 1))"
		return 1
	fi
	say "DomU agent ready ($RIG_GUEST), $((($(now_ds) - dc_t0 + 5) / 10))s after xcuda-xl create began"
}

# domu SECONDS CMD: runs CMD (sh -c) in the DomU, SECONDS at most.  Sets
# DU_RC (empty if no answer) and leaves stdout in $W/domu.out, stderr in
# $W/domu.err.  DU_LOST is 1 when the console lost lines of them (the
# DomU says how many it printed).
domu() {
	domu_send "$@" && domu_wait
}
# domu_send SECONDS CMD: the first half of domu, which returns once the
# command is sent; domu_wait is the second.  Between them Dom0 may do
# something else, or nothing: the measurements that must not share the
# CPUs with the rig's polling (echo_spinning) sleep there.
domu_send() {
	dm_t=$1
	shift
	SEQ=$((SEQ + 1))
	DU_RC=
	DU_LOST=0
	DU_COUNTS=
	: >"$W/domu.out"
	: >"$W/domu.err"
	[ -n "$DOMID" ] || return 1
	if domu_dead; then
		say "the DomU is not running ($(xl list "$DOMID" 2>&1 | tail -n 1)): not sending command $SEQ: $*"
		return 1
	fi
	dm_cmd=$*
	xenstore-write "$XT/cmd" "$SEQ $dm_t $*"
}
domu_wait() {
	if ! wait_for $((dm_t + 15)) 'domu_answered || domu_dead_5s'; then
		say "no answer from the DomU to command $SEQ: $dm_cmd"
		return 1
	fi
	if [ -z "$DU_RC" ]; then
		say "the DomU crashed or is gone, no answer to command $SEQ: $dm_cmd"
		xl list "$DOMID" 2>&1 | sed 's/^/RIG:   /'
		return 1
	fi
	# the output reaches the log before the end marker does
	wait_for 15 'grep -q "^XT:$SEQ:RC:" "$CLOG"' ||
		say "the output of command $SEQ did not reach the console log"
	tr -d '\r' <"$CLOG" | sed -n "s/^XT:$SEQ:O://p" >"$W/domu.out"
	tr -d '\r' <"$CLOG" | sed -n "s/^XT:$SEQ:E://p" >"$W/domu.err"
	dm_got="$(wc -l <"$W/domu.out" | tr -d ' ') $(wc -l <"$W/domu.err" | tr -d ' ')"
	if [ -n "$DU_COUNTS" ] && [ "$dm_got" != "$DU_COUNTS" ]; then
		DU_LOST=1
		say "the console lost lines of command $SEQ: stdout and stderr lines $dm_got of $DU_COUNTS"
	fi
	return 0
}
# domu_dead: the DomU crashed (xl's state c) or is gone; the scenarios
# that follow then fail at once instead of waiting out their limits.
# domu_dead_5s asks xl once in 25 calls of the 0.2 s waits: xl is no
# light program under the rig's emulation, and Dom0's CPU is measured.
domu_dead() {
	dd_s=$(xl list "$DOMID" 2>/dev/null | awk 'NR == 2 { print $5 }')
	case $dd_s in
	"" | *c* | *s*) return 0 ;;
	esac
	return 1
}
DD_N=0
domu_dead_5s() {
	DD_N=$((DD_N + 1))
	[ $((DD_N % 25)) = 0 ] && domu_dead
}
domu_answered() {
	dm_v=$(xsr "$XT/rc") || return 1
	[ "${dm_v%% *}" = "$SEQ" ] || return 1
	dm_v=${dm_v#* }
	DU_RC=${dm_v%% *}
	DU_COUNTS=
	[ "$dm_v" = "$DU_RC" ] || DU_COUNTS=${dm_v#* }
	case $DU_COUNTS in
	*[!0-9\ ]* | \ * | *\ ) DU_COUNTS= ;;	# not "N N": no counts
	esac
}
# domu_ok SECONDS CMD: domu, and true only if CMD exited 0.
domu_ok() {
	domu "$@" || return 1
	[ "$DU_RC" = 0 ]
}

fe_state() { xsr "/local/domain/$DOMID/device/xcuda/0/state"; }
be_state() { xsr "/local/domain/0/backend/xcuda/$DOMID/0/state"; }
connected() { [ "$(fe_state)" = 4 ] && [ "$(be_state)" = 4 ]; }
states() { echo "frontend state $(fe_state), backend state $(be_state)"; }

# ------------------------------------------------------------------ scenarios

# Scenario bookkeeping: a scenario function calls fail WHY (the first
# reason is kept) and returns.
SC_WHY=
fail() {
	say "fail: $*"
	[ -n "$SC_WHY" ] || SC_WHY=$*
	return 1
}
# need VAR WHAT...: fail unless each HAVE_VAR is 1.
need() {
	while [ $# -ge 2 ]; do
		eval "nd_v=\${HAVE_$1:-0}"
		# shellcheck disable=SC2154 # set by the eval
		[ "$nd_v" = 1 ] || { fail "$2 is not built"; return 1; }
		shift 2
	done
}

kernel_trouble() {
	dmesg | grep -E 'BUG:|Oops|WARNING:|general protection|Call Trace|refcount_t' |
		grep -v 'module verification failed'
}

# rig_wants GUEST: whether RIG_ONLY picks any scenario of that pass
# ("pvh", "pvh:NAME" or "pvh:NUMBER" for the PVH pass, "hvm" and so on
# for the HVM one, anything else for the PV one).
rig_wants() {
	[ -n "$RIG_ONLY" ] || return 0
	for rw_o in $RIG_ONLY; do
		case $1/$rw_o in
		pvh/pvh | pvh/pvh:* | hvm/hvm | hvm/hvm:*) return 0 ;;
		pv/pvh | pv/pvh:* | pv/hvm | pv/hvm:*) ;;
		pv/*) return 0 ;;
		esac
	done
	return 1
}

# scenario NUMBER NAME FUNCTION: in the PVH pass the result is named
# "pvh:NAME", and RIG_ONLY picks it as "pvh", "pvh:NAME" or "pvh:NUMBER"
# (in the HVM pass "hvm:NAME", and so on).
scenario() {
	sc_name=$2
	[ "$RIG_GUEST" = pv ] || sc_name=$RIG_GUEST:$2
	if [ -n "$RIG_ONLY" ]; then
		if [ "$RIG_GUEST" = pv ]; then
			case " $RIG_ONLY " in
			*" $1 "* | *" $2 "* | *" pv "*) ;;
			*) return 0 ;;
			esac
		else
			case " $RIG_ONLY " in
			*" $RIG_GUEST:$1 "* | *" $sc_name "* | *" $RIG_GUEST "*) ;;
			*) return 0 ;;
			esac
		fi
	fi
	SC_WHY=
	say "=== scenario $1: $sc_name"
	sc_t0=$(now_ds)
	sc_k0=$(kernel_trouble | wc -l)
	"$3"
	if [ "$(kernel_trouble | wc -l)" -gt "$sc_k0" ]; then
		kernel_trouble | tail -n +$((sc_k0 + 1)) | sed 's/^/RIG: dom0 kernel: /'
		fail "the Dom0 kernel logged: $(kernel_trouble | tail -n +$((sc_k0 + 1)) | head -n 1)"
	fi
	sc_s=$((($(now_ds) - sc_t0 + 5) / 10))
	if [ -z "$SC_WHY" ]; then
		echo "RIG-RESULT: PASS $sc_name (${sc_s}s)"
		PASSED=$((PASSED + 1))
	else
		# a DomU that crashed under the emulation explains a failure
		# that looks like xcuda's (the serial log has Xen's dump)
		if [ -n "$DOMID" ] && domu_dead; then
			SC_WHY="$SC_WHY (the DomU is not running: crashed or gone)"
		fi
		echo "RIG-RESULT: FAIL $sc_name: $SC_WHY"
		FAILED=$((FAILED + 1))
	fi
}

# ------------------------------------------------------------------ boot

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
[ -e /var/run ] || ln -s /run /var/run
mkdir -p "$W" /run/xen /run/xenstored /var/log/xen/console /var/lib/xen \
	/var/lock /var/lib/xenstored /tmp
say "init: kernel $(uname -r), mode $RIG_MODE"

# The toolstack, as /etc/init.d/xen starts it (xenfs needs xen-privcmd).
for m in xen-evtchn xen-privcmd xenfs xen-gntdev xen-gntalloc; do
	run insmod "$MODDIR/$m.ko"
done
run mount -t xenfs xenfs /proc/xen
run xenstored --pid-file /run/xenstored.pid
run timeout 60 xen-init-dom0
run xenconsoled --pid-file=/run/xenconsoled.pid --log=guest \
	--log-dir=/var/log/xen/console
say "toolstack up"

BACK_RC=missing
if [ "$HAVE_BACK" = 1 ]; then
	run insmod /lib/xcuda/xcuda-back.ko
	BACK_RC=$?
fi
: >"$XCUDAD_LOG"
# xcudad's log into the serial log
tail -f "$XCUDAD_LOG" | sed 's/^/XCUDAD| /' &
if [ "$RIG_MODE" = gpu ]; then
	# Every session goes on to the GPU host's xcudad.
	if ! gpu_net; then
		echo "RIG-RESULT: FAIL network: no way to the GPU host"
		FAILED=$((FAILED + 1))
		finish
	fi
	xcudad_start --upstream "$GPU_UPSTREAM" --key /etc/xcuda/gpu.key
else
	xcudad_start
fi

# shellcheck source=tests/xen/scenarios.sh
. /lib/xcuda-rig/scenarios.sh


# guest_pass TYPE: the DomU of the pass before (if any) destroyed and
# its nodes gone, one of TYPE (pvh or hvm) made from
# /etc/xen/xcuda-domU-TYPE.cfg, and scenarios 1 to 10 in it.  Whatever
# the pass before left unloaded or stopped is brought back first.
guest_pass() {
	gp_T=$(upper "$1")
	say "=== the $gp_T pass"
	pp_t0=$(now_ds)
	if [ -n "$DOMID" ]; then
		run timeout 60 xl destroy "$DOMID"
		DOMID=
	fi
	[ -z "$RELAY" ] || kill "$RELAY" 2>/dev/null
	RELAY=
	run timeout 30 xcuda-xl gc
	wait_for 30 '[ "$(xl list | wc -l)" -le 2 ]' || xl list | sed 's/^/RIG:   /'
	if [ "$HAVE_BACK" = 1 ] && ! grep -q '^xcuda_back ' /proc/modules; then
		xcudad_stop
		run insmod /lib/xcuda/xcuda-back.ko
		BACK_RC=$?
	fi
	xcudad_alive || xcudad_start
	RIG_GUEST=$1
	DOMU_CFG=/etc/xen/xcuda-domU-$1.cfg
	DOMU_NAME=xcuda-domU-$1
	if ! domu_create "$DOMU_NAME"; then
		echo "RIG-RESULT: FAIL $1:boot: the $gp_T DomU did not come up"
		FAILED=$((FAILED + 1))
		return
	fi
	pp_t1=$(now_ds)
	run_guest_scenarios
	pp_t2=$(now_ds)
	# what the pass adds to the run
	echo "RIG-TIME: $1 pass $(((pp_t2 - pp_t0 + 5) / 10))s: DomU before gone and $gp_T DomU up $(((pp_t1 - pp_t0 + 5) / 10))s, scenarios $(((pp_t2 - pp_t1 + 5) / 10))s"
}

# On a GPU host's rig the programs run on a GPU: memcpy_sizes pins 256 MiB.
DOMU_ARGS=
if [ "$RIG_MODE" = gpu ]; then DOMU_ARGS="xcuda=['backend=0, sessions=16, arena=800M']"; fi
if [ "$RIG_MODE" != test ] || rig_wants pv; then
	if ! domu_create "$DOMU_NAME" ${DOMU_ARGS:+"$DOMU_ARGS"}; then
		echo "RIG-RESULT: FAIL boot: the DomU did not come up"
		FAILED=$((FAILED + 1))
		[ "$RIG_MODE" = test ] || finish
	elif [ "$RIG_MODE" = demo ]; then
		scenario 0 demo demo
	elif [ "$RIG_MODE" = gpu ]; then
		run_gpu_scenarios
	else
		run_scenarios
	fi
fi
if [ "$RIG_MODE" = test ] && [ "${RIG_PVH:-1}" = 1 ] && rig_wants pvh; then
	guest_pass pvh
fi
if [ "$RIG_MODE" = test ] && [ "${RIG_HVM:-0}" = 1 ] && rig_wants hvm; then
	guest_pass hvm
fi

# leave nothing running: the DomU, its nodes
[ -z "$DOMID" ] || timeout 60 xl destroy "$DOMID" 2>/dev/null
timeout 30 xcuda-xl gc >/dev/null 2>&1
run xl list
finish
