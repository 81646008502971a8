#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Xen rig: boots Xen 4.17 + a Debian PV Dom0 + a PV DomU under
# qemu-system-x86_64 (software emulation, no KVM needed) with xcuda's
# modules, daemon and library, and runs the scenarios of scenarios.sh in
# one boot.
#
#   tests/xen/run.sh BUILD_DIR [--demo] [SCENARIO...]
#
#   BUILD_DIR  xcuda's build (BUILD_DIR/bin/xcudad, BUILD_DIR/lib/
#              libcudart.so.13, BUILD_DIR/bin/xcudactl); the kernel
#              modules and the CUDA test programs are built here.
#   --demo     boot, run tests/demo/demo.cu in the DomU through xcuda and
#              show each hop it took, then end.
#   SCENARIO   run only these (names or numbers; default all).
#
# Prints "PASS <scenario> (<seconds>s)" or "FAIL <scenario>: <why>" per
# scenario and, last, "N passed, N failed"; exits 0 only if all passed.
# The serial console (Xen, Dom0, and the DomU's console relayed by Dom0
# with "DOMU| " in front) is kept in BUILD_DIR/results/xen/serial.log;
# its tail is printed on failure.
#
# Needs what tests/xen/deps.sh installs.  Environment: KVER (default:
# the newest *-amd64 in /lib/modules), XCUDA_RIG_TIMEOUT (seconds for the
# boot, default 2400), CUDA_HOME, NVCC.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
TIMEOUT=${XCUDA_RIG_TIMEOUT:-2400}

usage() {
	echo "usage: $0 BUILD_DIR [--demo] [SCENARIO...]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
case $1 in -*) usage ;; esac
mkdir -p "$1" || exit 2
B=$(cd "$1" && pwd)
shift
MODE="test"
ONLY=()
for a; do
	case $a in
	--demo) MODE=demo ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) ONLY+=("$a") ;;
	esac
done

KVER=${KVER:-$(find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' \
	-printf '%f\n' 2>/dev/null | sort -V | tail -n 1)}
export KVER CUDA_HOME
RES=$B/results/xen
LOG=$RES/serial.log
mkdir -p "$RES"

# ------------------------------------------------------------------ checks

missing=()
for t in qemu-system-x86_64 busybox cpio zcat ldd make; do
	command -v "$t" >/dev/null || missing+=("$t")
done
[ -e /boot/xen-4.17-amd64.gz ] || missing+=(xen-hypervisor-4.17-amd64)
[ -x /usr/lib/xen-4.17/bin/xl ] || missing+=(xen-utils-4.17)
[ -n "$KVER" ] && [ -e "/boot/vmlinuz-$KVER" ] || missing+=(linux-image-amd64)
[ -n "$KVER" ] && [ -d "/lib/modules/$KVER/build" ] || missing+=(linux-headers-amd64)
if [ "${#missing[@]}" -gt 0 ]; then
	echo "$0: missing: ${missing[*]} (run tests/xen/deps.sh)" >&2
	exit 2
fi

# ------------------------------------------------------------------ build

# Pieces that fail to build are reported as failures of their own; the
# image is made without them and the scenarios that need them fail too.
BUILD_FAIL=()
build() { # NAME LOGNAME CMD...
	local name=$1 blog=$RES/build-$2.log
	shift 2
	echo "== build: $name"
	if ! "$@" >"$blog" 2>&1; then
		echo "build of $name failed:"
		tail -n 20 "$blog" | sed 's/^/    /'
		BUILD_FAIL+=("$name")
		return 1
	fi
}

for d in dom0-kmod guest-kmod tests/xen/hostile; do
	if [ -f "$TOP/$d/Makefile" ]; then
		build "$d" "${d//\//-}" make -C "$TOP/$d" KVER="$KVER"
	else
		echo "== build: $d: not in the tree yet, left out"
	fi
done
if [ -x "$NVCC" ]; then
	build "CUDA test programs" cuda make -C "$TOP/tests/cuda" \
		OUT="$B/tests/cuda" NVCC="$NVCC" CUDA_HOME="$CUDA_HOME"
	if [ "$MODE" = demo ]; then
		mkdir -p "$B/demo"
		# as tools/demo.sh builds it: the runtime as a shared library,
		# found through RUNPATH natively and LD_LIBRARY_PATH in the DomU
		build "demo program" demo "$NVCC" -cudart shared -O2 \
			-gencode arch=compute_75,code=sm_75 \
			-gencode arch=compute_90,code='[sm_90,compute_90]' \
			-Xlinker --enable-new-dtags -Xlinker -rpath \
			-Xlinker "$CUDA_HOME/lib64" \
			-o "$B/demo/demo" "$TOP/tests/demo/demo.cu" -ldl
	fi
else
	echo "== build: no nvcc at $NVCC: the CUDA programs are left out"
fi
for f in bin/xcudad lib/libcudart.so.13 bin/xcudactl bin/xcuda-ring-test; do
	[ -e "$B/$f" ] || echo "== $B/$f is not built (make): left out"
done

rm -f "$LOG"
echo "== images"
if ! RIG_MODE=$MODE RIG_ONLY="${ONLY[*]}" "$HERE/mkimages.sh" "$B" >"$RES/mkimages.log" 2>&1; then
	cat "$RES/mkimages.log"
	echo "FAIL images: mkimages.sh failed"
	echo "0 passed, 1 failed"
	exit 1
fi
tail -n 1 "$RES/mkimages.log"

# ------------------------------------------------------------------ boot

# The reference recipe's proven settings: qemu64 with SVM and NPT (no
# SMAP trouble), bootscrub=false (QEMU would touch all its RAM), a 1 GiB
# Dom0, isa-debug-exit for the verdict.  gnttab_max_frames: the arenas
# are Dom0 pages granted to the guest (docs/xl.md): 256 frames hold
# 131072 grants, 512 MiB of arenas at once, above what the scenarios use.
IMG=$B/xen-rig
XEN_CMDLINE="console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all"
XEN_CMDLINE+=" console_timestamps=boot dom0_mem=1G,max:1G dom0_max_vcpus=2"
XEN_CMDLINE+=" bootscrub=false gnttab_max_frames=256"
DOM0_CMDLINE="console=hvc0 earlyprintk=xen rdinit=/init"
# shellcheck disable=SC2054 # commas inside QEMU's arguments
QEMU=(qemu-system-x86_64 -machine pc -accel tcg,thread=multi
	-cpu qemu64,+svm,+npt -smp 2 -m 2560
	-display none -vga none -monitor none -serial stdio -no-reboot
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	-kernel "$IMG/xen" -append "$XEN_CMDLINE"
	-initrd "$IMG/vmlinuz $DOM0_CMDLINE,$IMG/dom0.cpio")

echo "== boot (serial log: $LOG)"
t0=$(date +%s)
# stdin from /dev/null: the stdio chardev only needs the output side
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" </dev/null >"$LOG" 2>&1 &
qpid=$!
# the results as they come
tail -n +1 -f --pid="$qpid" "$LOG" 2>/dev/null |
	sed -u -n 's/\r$//; s/.*RIG-RESULT: //p; s/.*RIG-DEMO: //p'
wait "$qpid"
qrc=$?
secs=$(($(date +%s) - t0))
echo "== QEMU ended after ${secs}s (status $qrc)"

# ------------------------------------------------------------------ verdict

tr -d '\r' <"$LOG" >"$RES/serial.clean"
mapfile -t results < <(sed -n 's/.*RIG-RESULT: //p' "$RES/serial.clean")
if [ "$MODE" = demo ]; then
	expected=(demo)
else
	read -r -a expected < <(sed -n 's/^SCENARIOS="\(.*\)"$/\1/p' "$HERE/scenarios.sh")
	if [ "${#ONLY[@]}" -gt 0 ]; then
		sel=()
		i=0
		for s in "${expected[@]}"; do
			i=$((i + 1))
			for o in "${ONLY[@]}"; do
				[ "$o" = "$s" ] || [ "$o" = "$i" ] && sel+=("$s")
			done
		done
		expected=("${sel[@]}")
	fi
fi

pass=0
fail=${#BUILD_FAIL[@]}
for name in "${BUILD_FAIL[@]}"; do
	echo "FAIL build-$name: does not build (see $RES)"
done
why_early="the boot ended early"
case $qrc in
124 | 137) why_early="the boot timed out after ${TIMEOUT}s" ;;
esac
for r in "${results[@]}"; do
	case $r in
	"PASS "*) pass=$((pass + 1)) ;;
	*) fail=$((fail + 1)) ;;
	esac
done
for s in "${expected[@]}"; do
	if ! printf '%s\n' "${results[@]}" | grep -qE "^(PASS|FAIL) ${s}[ :]"; then
		echo "FAIL $s: no result ($why_early)"
		fail=$((fail + 1))
	fi
done
if [ "$fail" -gt 0 ] || [ "$pass" -eq 0 ]; then
	echo "== the last lines of $LOG:"
	tail -n 60 "$RES/serial.clean" | sed 's/^/    /'
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
