#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Xen rig: boots Xen 4.17 + a Debian PV Dom0 + a PV DomU under
# qemu-system-x86_64 (software emulation, no KVM needed) with xcuda's
# modules, daemon and library, and runs the scenarios of scenarios.sh in
# one boot.
#
#   tests/xen/run.sh BUILD_DIR [--demo] [SCENARIO...]
#   tests/xen/run.sh BUILD_DIR --pack FILE
#
#   BUILD_DIR  xcuda's build (BUILD_DIR/bin/xcudad, BUILD_DIR/lib/
#              libcudart.so.13, BUILD_DIR/bin/xcudactl); the kernel
#              modules and the CUDA test programs are built here.
#   --demo     boot, run tests/demo/demo.cu in the DomU through xcuda and
#              show each hop it took, then end.
#   SCENARIO   run only these (names or numbers; default all): the PV
#              DomU's first, then, in a PVH DomU, scenarios 1 to 10
#              again (SCENARIOS_GUEST), named "pvh:NAME" ("pvh" alone:
#              all of them; "pv": all of the PV pass's); with
#              XCUDA_RIG_HVM=1, then in an HVM DomU too, "hvm:NAME".
#   --pack     build the images of the rig for a GPU host instead, whose
#              Dom0 relays the DomU's sessions to that host's xcudad,
#              and pack them with QEMU into FILE for gpu-rig.sh (the GPU
#              host has no Debian packages); no boot here.
#
# Prints "PASS <scenario> (<seconds>s)" or "FAIL <scenario>: <why>" per
# scenario, the RIG-PING lines, a line "RIG pv: N passed, N failed" per
# guest type and, last, "N passed, N failed"; exits 0 only if all passed.
# The serial console (Xen, Dom0, and the DomU's console relayed by Dom0
# with "DOMU| " in front) is kept in BUILD_DIR/results/xen/serial.log;
# its tail is printed on failure.
#
# Needs what tests/xen/deps.sh installs.  Environment: KVER (default:
# the newest *-amd64 in /lib/modules), XCUDA_RIG_TIMEOUT (seconds for the
# boot, default 2400), XCUDA_RIG_PVH (0: no PVH pass), XCUDA_RIG_HVM (1:
# an HVM pass after it; its device model goes into Dom0), XCUDA_RIG_TCG
# (multi or single: QEMU's TCG threading), CUDA_HOME, NVCC.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
TIMEOUT=${XCUDA_RIG_TIMEOUT:-2400}

usage() {
	echo "usage: $0 BUILD_DIR [--demo] [SCENARIO...] | --pack FILE" >&2
	exit 2
}
[ $# -ge 1 ] || usage
case $1 in -*) usage ;; esac
mkdir -p "$1" || exit 2
B=$(cd "$1" && pwd)
shift
MODE="test"
ONLY=()
PACK=
while [ $# -gt 0 ]; do
	a=$1
	shift
	case $a in
	--demo) MODE=demo ;;
	--pack)
		[ $# -ge 1 ] || usage
		MODE=gpu
		PACK=$1
		shift
		;;
	-h | --help) usage ;;
	-*) usage ;;
	*) ONLY+=("$a") ;;
	esac
done

KVER=${KVER:-$(find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' \
	-printf '%f\n' 2>/dev/null | sort -V | tail -n 1)}
export KVER CUDA_HOME
RES=$B/results/xen
# a pack's build logs apart: the last boot's serial log stays
[ "$MODE" = gpu ] && RES=$B/results/xen-pack
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
	# the GPU host's rig measures in the DomU and in Dom0 too
	[ "$MODE" = gpu ] && build "benchmark" bench \
		"$TOP/tests/bench/build-bench.sh" "$B"
	# and holds its GPU with a kernel that never ends
	[ "$MODE" = gpu ] && mkdir -p "$B/rig" && build "gpu-hold" gpu-hold \
		"$NVCC" -cudart shared -O2 \
		-gencode arch=compute_75,code=sm_75 \
		-gencode arch=compute_90,code='[sm_90,compute_90]' \
		-o "$B/rig/gpu-hold" "$TOP/tests/xen/gpu-hold.cu"
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

if [ "$MODE" = gpu ]; then
	[ "${#BUILD_FAIL[@]}" -eq 0 ] || { echo "FAIL pack: ${BUILD_FAIL[*]} did not build"; exit 1; }
	"$HERE/pack-gpu.sh" "$B/xen-rig" "$PACK" || { echo "FAIL pack: pack-gpu.sh failed"; exit 1; }
	exit 0
fi

# ------------------------------------------------------------------ boot

IMG=$B/xen-rig
# shellcheck source=tests/xen/rig-lib.sh
. "$HERE/rig-lib.sh"
rig_qemu_args "$IMG"
rig_boot "$LOG" "$TIMEOUT" qemu-system-x86_64 "${RIG_QEMU_ARGS[@]}"

# ------------------------------------------------------------------ verdict

if [ "$MODE" = demo ]; then
	expected=(demo)
else
	read -r -a pv < <(sed -n 's/^SCENARIOS="\(.*\)"$/\1/p' "$HERE/scenarios.sh")
	expected=()
	# a PV scenario by name, number or "pv"
	i=0
	for s in "${pv[@]}"; do
		i=$((i + 1))
		want=$((${#ONLY[@]} == 0))
		for o in ${ONLY[@]+"${ONLY[@]}"}; do
			case $o in "$s" | "$i" | pv) want=1 ;; esac
		done
		[ "$want" = 0 ] || expected+=("$s")
	done
	# a PVH one by "pvh", "pvh:NAME" or "pvh:NUMBER" (its number in the
	# PV pass), an HVM one likewise; XCUDA_RIG_PVH=0: no PVH pass,
	# XCUDA_RIG_HVM=1: an HVM pass (mkimages.sh tells Dom0)
	read -r -a guest < <(sed -n 's/^SCENARIOS_GUEST="\(.*\)"$/\1/p' "$HERE/scenarios.sh")
	for t in pvh hvm; do
		other=("${guest[@]}")
		[ "$t" = pvh ] && [ "${XCUDA_RIG_PVH:-1}" = 0 ] && other=()
		[ "$t" = hvm ] && [ "${XCUDA_RIG_HVM:-0}" != 1 ] && other=()
		for s in ${other[@]+"${other[@]}"}; do
			i=0
			for p in "${pv[@]}"; do
				i=$((i + 1))
				[ "$p" = "$s" ] && break
			done
			want=$((${#ONLY[@]} == 0))
			for o in ${ONLY[@]+"${ONLY[@]}"}; do
				case $o in "$t" | "$t:$s" | "$t:$i") want=1 ;; esac
			done
			[ "$want" = 0 ] || expected+=("$t:$s")
		done
	done
fi

for name in ${BUILD_FAIL[@]+"${BUILD_FAIL[@]}"}; do
	echo "FAIL build-$name: does not build (see $RES)"
done
rig_verdict "$RES/serial.clean" "$TIMEOUT" "${#BUILD_FAIL[@]}" "${expected[@]}"
