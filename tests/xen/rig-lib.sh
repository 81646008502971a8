# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The rig's machine, its boot and its verdict, for run.sh (QEMU from
# Debian's packages here) and gpu-rig.sh (QEMU from the pack, on a GPU
# host).  Sourced.
#
# The reference recipe's proven settings: qemu64 with SVM and NPT (no
# SMAP trouble), bootscrub=false (QEMU would touch all its RAM), a 1 GiB
# Dom0, isa-debug-exit for the verdict.  gnttab_max_frames: the arenas
# are Dom0 pages granted to the guest (docs/xl.md): 256 frames hold
# 131072 grants, 512 MiB of arenas at once, above what the scenarios use.
RIG_XEN_CMDLINE="console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all"
RIG_XEN_CMDLINE+=" console_timestamps=boot dom0_mem=1G,max:1G dom0_max_vcpus=2"
RIG_XEN_CMDLINE+=" bootscrub=false gnttab_max_frames=256"
RIG_DOM0_CMDLINE="console=hvc0 earlyprintk=xen rdinit=/init"

# rig_qemu_args IMG_DIR [net]: the arguments, in the array RIG_QEMU_ARGS.
# XCUDA_RIG_TCG picks TCG's threading ("multi", the default: a host
# thread per emulated CPU; "single": one thread for both).  With "net",
# an e1000 NIC on QEMU's user network: Dom0 reaches the host's loopback
# at 10.0.2.2 (no option ROM: nothing boots from it).
rig_qemu_args() {
	# shellcheck disable=SC2054 # commas inside QEMU's arguments
	RIG_QEMU_ARGS=(-machine pc -accel "tcg,thread=${XCUDA_RIG_TCG:-multi}"
		-cpu qemu64,+svm,+npt -smp 2 -m "${RIG_QEMU_MB:-2560}"
		-display none -vga none -monitor none -serial stdio -no-reboot
		-device isa-debug-exit,iobase=0xf4,iosize=0x04
		-kernel "$1/xen" -append "$RIG_XEN_CMDLINE"
		-initrd "$1/vmlinuz $RIG_DOM0_CMDLINE,$1/dom0.cpio")
	if [ "${2:-}" = net ]; then
		# shellcheck disable=SC2054 # commas inside QEMU's arguments
		RIG_QEMU_ARGS+=(-netdev user,id=n0
			-device e1000,netdev=n0,romfile=)
	else
		RIG_QEMU_ARGS+=(-nic none)
	fi
}

# rig_boot LOG TIMEOUT QEMU...: boots, printing each scenario's result as
# it comes; the serial log goes to LOG and, without \r, to LOG's
# directory as serial.clean.  Sets RIG_QRC (QEMU's status) and RIG_SECS.
rig_boot() {
	local log=$1 timeout=$2 clean t0 qpid
	shift 2
	echo "== boot (serial log: $log)"
	t0=$(date +%s)
	# stdin from /dev/null: the stdio chardev only needs the output side
	timeout -k 10 "$timeout" "$@" </dev/null >"$log" 2>&1 &
	qpid=$!
	tail -n +1 -f --pid="$qpid" "$log" 2>/dev/null |
		sed -u -n 's/\r$//; s/.*RIG-RESULT: //p; s/.*RIG-DEMO: //p
			s/^.*\(RIG-PING: .*: ping ok\)/\1/p; s/^.*\(RIG-TIME: \)/\1/p'
	wait "$qpid"
	RIG_QRC=$?
	RIG_SECS=$(($(date +%s) - t0))
	echo "== QEMU ended after ${RIG_SECS}s (status $RIG_QRC)"
	clean=$(dirname "$log")/serial.clean
	tr -d '\r' <"$log" >"$clean"
}

# rig_verdict SERIAL_CLEAN TIMEOUT FAILED_BEFORE EXPECTED...: a line per
# scenario that has no PASS, the log's tail if any failed, a line
# "RIG pv: N passed, N failed" per guest type when a PVH or HVM pass was
# run or expected (results named "pvh:NAME", "hvm:NAME"), and last "N
# passed, N failed".
# Returns 0 only if every expected scenario passed.
rig_verdict() {
	local clean=$1 timeout=$2 fail=$3 pass=0 r s t why_early results
	local -A tp=([pv]=0 [pvh]=0 [hvm]=0) tf=([pv]=$3 [pvh]=0 [hvm]=0)
	local -A seen=([pv]=1)
	shift 3
	mapfile -t results < <(sed -n 's/.*RIG-RESULT: //p' "$clean")
	why_early="the boot ended early"
	case $RIG_QRC in
	124 | 137) why_early="the boot timed out after ${timeout}s" ;;
	esac
	for r in ${results[@]+"${results[@]}"}; do
		t=pv
		case $r in *" pvh:"*) t=pvh ;; *" hvm:"*) t=hvm ;; esac
		seen[$t]=1
		case $r in
		"PASS "*) pass=$((pass + 1)) tp[$t]=$((tp[$t] + 1)) ;;
		*) fail=$((fail + 1)) tf[$t]=$((tf[$t] + 1)) ;;
		esac
	done
	for s; do
		t=pv
		case $s in pvh:*) t=pvh ;; hvm:*) t=hvm ;; esac
		seen[$t]=1
		if ! printf '%s\n' ${results[@]+"${results[@]}"} |
			grep -qE "^(PASS|FAIL) ${s}[ :]"; then
			echo "FAIL $s: no result ($why_early)"
			fail=$((fail + 1))
			tf[$t]=$((tf[$t] + 1))
		fi
	done
	if [ "$fail" -gt 0 ] || [ "$pass" -eq 0 ]; then
		echo "== the last lines of the serial log:"
		tail -n 60 "$clean" | sed 's/^/    /'
	fi
	if [ "${#seen[@]}" -gt 1 ]; then
		for t in pv pvh hvm; do
			[ -z "${seen[$t]:-}" ] ||
				echo "RIG $t: ${tp[$t]} passed, ${tf[$t]} failed"
		done
	fi
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
}
