#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds what the Xen rig boots, from Debian's packages and xcuda's build
# outputs:
#
#   tests/xen/mkimages.sh BUILD_DIR
#
# writes BUILD_DIR/xen-rig/{xen,vmlinuz,dom0.cpio}: the hypervisor (the
# raw ELF that QEMU's multiboot loader takes), the Debian kernel (Dom0
# and DomU alike) and Dom0's initramfs, which holds the DomU's kernel and
# initramfs.  Pieces that are not built yet (a kernel module, xcudactl)
# are left out and listed in the image's /etc/xcuda-rig.conf; the
# scenarios that need them then fail with a clear reason.
#
# Environment: KVER (default: the newest *-amd64 in /lib/modules),
# RIG_MODE (test or demo), RIG_ONLY (scenarios to run, by name or number,
# e.g. "1 echo"; "pvh", "pvh:NAME", "pvh:NUMBER" for the PVH pass's;
# default all; "hvm", "hvm:NAME" likewise), XCUDA_RIG_PVH (0: no PVH
# pass), XCUDA_RIG_HVM (1: an HVM pass too, with its device model in
# Dom0), CUDA_HOME.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
B=$(cd "$1" && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
XENVER=4.17
XENBIN=/usr/lib/xen-$XENVER/bin
# libxl's path for the qemu-xen device model (Debian's qemu-system-xen)
XENQEMU=/usr/libexec/xen-qemu-system-i386
# Never the running kernel: the rig boots Debian's, whatever the host runs.
KVER=${KVER:-$(find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' \
	-printf '%f\n' | sort -V | tail -n 1)}
[ -n "$KVER" ] || { echo "$0: no *-amd64 kernel in /lib/modules" >&2; exit 1; }
OUT=$B/xen-rig
CUDA_TESTS=$B/tests/cuda
# Where the programs live in both images (shared_lib finds its libraries
# next to itself through $ORIGIN).
OPT=/opt/xcuda

log() { echo "mkimages: $*"; }
die() { echo "mkimages: $*" >&2; exit 1; }

# copy_elf ROOT FILE [DEST]: FILE at DEST (default: its own path) in ROOT,
# with the shared libraries it needs at their own paths.  libcudart is
# left out unless KEEP_CUDART=1: in the DomU the programs must find
# xcuda's library, never the real one.  cuBLAS, cuRAND and cuFFT never
# go: the DomU has xcuda's, and Dom0 has no GPU for NVIDIA's (over half
# a gigabyte).
copy_elf() {
	local root=$1 f=$2 dest=${3:-$2} lib
	install -D -m 0755 "$f" "$root$dest"
	while read -r lib; do
		case $lib in
		*/libcudart.so*) [ "${KEEP_CUDART:-0}" = 1 ] || continue ;;
		*/libcublas.so* | */libcublasLt.so* | */libcurand.so* | \
		*/libcufft.so*) continue ;;
		esac
		[ -e "$root$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
	done < <(ldd_libs "$f")
}

# ldd_libs FILE: the absolute paths of the libraries FILE loads.
ldd_libs() {
	local out
	out=$(LD_LIBRARY_PATH=${LDD_PATH:-} ldd "$1" 2>&1) || {
		# a static binary has nothing to add
		grep -q 'not a dynamic executable' <<<"$out" && return 0
		die "ldd $1: $out"
	}
	if grep -q 'not found' <<<"$out"; then
		die "ldd $1: a library is missing: $(grep 'not found' <<<"$out")"
	fi
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out"
}

busybox_root() {
	local root=$1 app
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,run,tmp,root,usr/bin,usr/sbin,var/log,var/lib,var/lock,lib/xcuda}
	install -m 0755 "$(command -v busybox)" "$root/bin/busybox"
	for app in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$app" ] || ln -s busybox "$root/bin/$app"
	done
	ln -s /proc/mounts "$root/etc/mtab"
	# glibc dlopen()s libgcc_s for pthread_cancel and unwinding; ldd does
	# not list it, and xl aborts without it.
	install -D -m 0644 "$(readlink -f /lib/x86_64-linux-gnu/libgcc_s.so.1)" \
		"$root/lib/x86_64-linux-gnu/libgcc_s.so.1"
	# xcudad runs its workers as nobody when there is no xcuda user.
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$root/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$root/etc/group"
}

xenstore_clients() {
	local root=$1 a
	copy_elf "$root" /usr/bin/xenstore
	for a in read write ls list watch rm exists chmod; do
		ln -sf xenstore "$root/usr/bin/xenstore-$a"
	done
}

# cuda_tests ROOT: the CUDA test programs, their libraries and the list
# of programs in the order to run them.
cuda_tests() {
	local root=$1 p
	[ -s "$OUT/programs" ] || return 0
	mkdir -p "$root$OPT/tests/cuda"
	while read -r p; do
		copy_elf "$root" "$CUDA_TESTS/$p" "$OPT/tests/cuda/$p"
	done <"$OUT/programs"
	for p in "$CUDA_TESTS"/libxct_*.so; do
		[ -e "$p" ] && copy_elf "$root" "$p" "$OPT/tests/cuda/${p##*/}"
	done
	# what the driver API programs load beside themselves
	for p in "$CUDA_TESTS"/*.fatbin "$CUDA_TESTS"/*.ptx "$CUDA_TESTS"/*.cubin; do
		[ -e "$p" ] && install -m 0644 "$p" "$root$OPT/tests/cuda/"
	done
	install -m 0644 "$OUT/programs" "$root$OPT/tests/cuda/PROGRAMS"
}

# unpacked_ko NAME DEST [DIR]: an in-tree module of the Debian kernel
# (under kernel/DIR, default drivers/xen), as a .ko (busybox insmod does
# not decompress).
unpacked_ko() {
	local f
	f=$(find "/lib/modules/$KVER/kernel/${3:-drivers/xen}" -name "$1.ko*" | head -n 1)
	[ -n "$f" ] || die "module $1 not found in /lib/modules/$KVER"
	case $f in
	*.ko) cp "$f" "$2/$1.ko" ;;
	*.ko.xz) xz -dc "$f" >"$2/$1.ko" ;;
	*.ko.zst) zstd -dcq "$f" >"$2/$1.ko" ;;
	*.ko.gz) gzip -dc "$f" >"$2/$1.ko" ;;
	esac
}

# pack ROOT FILE gzip|none
pack() {
	(cd "$1" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --quiet -R 0:0) >"$2.tmp"
	if [ "$3" = gzip ]; then
		gzip -6 -n -c "$2.tmp" >"$2"
		rm -f "$2.tmp"
	else
		mv "$2.tmp" "$2"
	fi
}

have() { [ -e "$1" ] && echo 1 || echo 0; }

# copy_elf_guest ROOT FILE DEST: a program linked against libcudart,
# which LD_LIBRARY_PATH resolves to xcuda's own library in the image.
copy_elf_guest() {
	LDD_PATH=$B/lib copy_elf "$@"
}
# guest_side ROOT: xcuda's guest libraries and xcudactl, as a DomU has
# them (and Dom0 too: its own processes use the local socket, to
# measure the local path and to flood it).
guest_side() {
	local root=$1 f
	[ -e "$GUESTLIB" ] && copy_elf "$root" "$GUESTLIB" "$OPT/lib/libcudart.so.13"
	# xcuda's driver API beside it: it finds the runtime by its $ORIGIN.
	if [ -e "$GUESTDRV" ]; then
		copy_elf_guest "$root" "$GUESTDRV" "$OPT/lib/libcuda.so.1"
		for f in libcublas.so.13 libcublasLt.so.13 libnvidia-ml.so.1 \
			libcurand.so.10 libcufft.so.12; do
			[ -e "$B/lib/$f" ] && copy_elf_guest "$root" "$B/lib/$f" "$OPT/lib/$f"
		done
	fi
	[ -e "$XCUDACTL" ] && copy_elf_guest "$root" "$XCUDACTL" /usr/bin/xcudactl
	[ -e "$RING_TEST" ] && copy_elf_guest "$root" "$RING_TEST" /usr/bin/xcuda-ring-test
	return 0
}

mkdir -p "$OUT"
# The CUDA test programs that are built, in the order to run them.
: >"$OUT/programs"
if [ -d "$CUDA_TESTS" ]; then
	make -s -C "$TOP/tests/cuda" OUT="$CUDA_TESTS" list | while read -r p; do
		[ -x "$CUDA_TESTS/$p" ] && echo "$p"
	done >"$OUT/programs"
fi
log "kernel $KVER, Xen $XENVER, build $B"
# QEMU's multiboot loader takes the raw ELF32 image, not the .gz.
zcat "/boot/xen-$XENVER-amd64.gz" >"$OUT/xen"
cp "/boot/vmlinuz-$KVER" "$OUT/vmlinuz"

FRONT_KO=$TOP/guest-kmod/xcuda-front.ko
BACK_KO=$TOP/dom0-kmod/xcuda-back.ko
HOSTILE_KO=$TOP/tests/xen/hostile/xcuda-hostile.ko
FLOOD_KO=$TOP/tests/xen/hostile/xcuda-flood.ko
BADBACK_KO=$TOP/tests/xen/hostile/xcuda-badback.ko
XCUDAD=$B/bin/xcudad
XCUDACTL=$B/bin/xcudactl
RING_TEST=$B/bin/xcuda-ring-test
GUESTLIB=$B/lib/libcudart.so.13
GUESTDRV=$B/lib/libcuda.so.1
DEMO=$B/demo/demo
BENCH=$B/bench/xcuda-bench
HOLD=$B/rig/gpu-hold
RIG_MODE=${RIG_MODE:-test}
# On a GPU host's rig (RIG_MODE=gpu) Dom0 reaches that host's loopback
# through QEMU's user network: its xcudad there, and the native outputs.
GPU_UPSTREAM=10.0.2.2:7701
GPU_REFS=http://10.0.2.2:7702

# ------------------------------------------------------------------ DomU
log "DomU initramfs"
R=$OUT/rootfs-domU
busybox_root "$R"
xenstore_clients "$R"
[ -e "$FRONT_KO" ] && install -m 0644 "$FRONT_KO" "$R/lib/xcuda/"
[ -e "$HOSTILE_KO" ] && install -m 0644 "$HOSTILE_KO" "$R/lib/xcuda/"
guest_side "$R"
# The programs are linked against libcudart too.
export LDD_PATH=$B/lib
cuda_tests "$R"
[ -e "$DEMO" ] && copy_elf "$R" "$DEMO" "$OPT/demo/demo"
if [ "$RIG_MODE" = gpu ]; then
	[ -e "$BENCH" ] && copy_elf "$R" "$BENCH" "$OPT/bench/xcuda-bench"
	[ -e "$HOLD" ] && copy_elf "$R" "$HOLD" "$OPT/bin/gpu-hold"
	# driver_link links the toolkit's device runtime, as a guest with
	# the toolkit installed would (on a GPU the program gets that far)
	f=$CUDA_HOME/lib64/libcudadevrt.a
	[ -e "$f" ] && install -D -m 0644 "$(readlink -f "$f")" "$R$f"
fi
unset LDD_PATH
install -m 0755 "$HERE/domU-init.sh" "$R/init"
install -m 0755 "$HERE/rig-rmmod.sh" "$R/usr/bin/rig-rmmod"
pack "$R" "$OUT/domU.cpio.gz" gzip

# ------------------------------------------------------------------ Dom0
log "Dom0 initramfs"
R=$OUT/rootfs-dom0
busybox_root "$R"
for f in xl xenstored xenconsoled xenconsole xen-init-dom0 libxl-save-helper; do
	copy_elf "$R" "$XENBIN/$f"
	ln -sf "$XENBIN/$f" "$R/usr/sbin/$f"
done
xenstore_clients "$R"
mkdir -p "$R/lib/modules/$KVER/xen"
for m in xen-evtchn xen-privcmd xenfs xen-gntdev xen-gntalloc; do
	unpacked_ko "$m" "$R/lib/modules/$KVER/xen"
done
install -D -m 0644 /etc/xen/xl.conf "$R/etc/xen/xl.conf"
install -D -m 0644 "$HERE/xcuda-domU.cfg" "$R/etc/xen/xcuda-domU.cfg"
install -D -m 0644 "$HERE/xcuda-domU-pvh.cfg" "$R/etc/xen/xcuda-domU-pvh.cfg"
if [ "${XCUDA_RIG_HVM:-0}" = 1 ]; then
	# An HVM guest's device model and firmware, where libxl looks for
	# them: QEMU (about 25 MiB with its libraries, so only when the HVM
	# pass is asked for), hvmloader, the SeaBIOS that libxl hands it,
	# the option ROM with which QEMU boots a kernel directly, and its keymap.
	[ -x "$XENQEMU" ] || die "no $XENQEMU (qemu-system-xen; tests/xen/deps.sh)"
	copy_elf "$R" "$XENQEMU"
	install -D -m 0644 "/usr/lib/xen-$XENVER/boot/hvmloader" \
		"$R/usr/lib/xen-$XENVER/boot/hvmloader"
	install -D -m 0644 "$(readlink -f /usr/share/seabios/bios-256k.bin)" \
		"$R/usr/share/seabios/bios-256k.bin"
	# (QEMU reads its keymap even with no display)
	for f in linuxboot.bin keymaps/en-us; do
		install -D -m 0644 "$(readlink -f "/usr/share/qemu/$f")" "$R/usr/share/qemu/$f"
	done
	install -D -m 0644 "$HERE/xcuda-domU-hvm.cfg" "$R/etc/xen/xcuda-domU-hvm.cfg"
fi
install -D -m 0644 "$OUT/vmlinuz" "$R/boot/domU/vmlinuz"
install -D -m 0644 "$OUT/domU.cpio.gz" "$R/boot/domU/initrd.img"
install -m 0755 "$TOP/xenstore/xcuda-xl" "$R/usr/sbin/xcuda-xl"
[ -e "$BACK_KO" ] && install -m 0644 "$BACK_KO" "$R/lib/xcuda/"
[ -e "$FLOOD_KO" ] && install -m 0644 "$FLOOD_KO" "$R/lib/xcuda/"
[ -e "$BADBACK_KO" ] && install -m 0644 "$BADBACK_KO" "$R/lib/xcuda/"
# xcudad loads the real runtime through its RUNPATH, at the same path as
# here (it links it; a relaying xcudad never calls it).
[ -e "$XCUDAD" ] && KEEP_CUDART=1 copy_elf "$R" "$XCUDAD" /usr/sbin/xcudad
for f in "$CUDA_HOME"/lib64/libcudart.so.13*; do
	[ -e "$f" ] && install -D -m 0644 "$(readlink -f "$f")" "$R$f"
done
# Dom0's own processes: xcudactl over the local socket.
guest_side "$R"
if [ "$RIG_MODE" = gpu ]; then
	# xcudad relays every session to the GPU host (it never loads the
	# runtime there); the native outputs come from that host.  Dom0
	# measures the local path with xcudactl and the benchmark.
	# the programs to compare (the DomU has them)
	install -D -m 0644 "$OUT/programs" "$R$OPT/tests/cuda/PROGRAMS"
	[ -e "$BENCH" ] && copy_elf_guest "$R" "$BENCH" "$OPT/bench/xcuda-bench"
	[ -e "$HOLD" ] && copy_elf_guest "$R" "$HOLD" "$OPT/bin/gpu-hold"
	# QEMU's NIC, for the user network to the GPU host
	mkdir -p "$R/lib/modules/$KVER/net"
	unpacked_ko e1000 "$R/lib/modules/$KVER/net" drivers/net/ethernet/intel
	# the key Dom0's xcudad proves to the GPU host's (pack-gpu.sh
	# takes it along)
	head -c 48 /dev/urandom >"$OUT/gpu.key"
	chmod 600 "$OUT/gpu.key"
	install -D -m 0600 "$OUT/gpu.key" "$R/etc/xcuda/gpu.key"
else
	# the native programs load the real runtime through their RUNPATH
	KEEP_CUDART=1 cuda_tests "$R"
	# Dom0 has no driver: what the real one answers without a device
	# stands in for the native runs of the driver API programs.
	for f in "$TOP"/tests/cuda/nodevice/*.out; do
		[ -e "$f" ] && install -D -m 0644 "$f" \
			"$R$OPT/tests/cuda/nodevice/${f##*/}"
	done
fi
install -m 0755 "$HERE/dom0-init.sh" "$R/init"
install -m 0755 "$HERE/rig-rmmod.sh" "$R/usr/bin/rig-rmmod"
install -D -m 0644 "$HERE/scenarios.sh" "$R/lib/xcuda-rig/scenarios.sh"
cat >"$R/etc/xcuda-rig.conf" <<EOF
# Written by mkimages.sh: what this image holds and what to run.
KVER=$KVER
RIG_MODE=$RIG_MODE
RIG_ONLY="${RIG_ONLY:-}"
RIG_PVH=${XCUDA_RIG_PVH:-1}
RIG_HVM=${XCUDA_RIG_HVM:-0}
GPU_UPSTREAM=$GPU_UPSTREAM
GPU_REFS=$GPU_REFS
HAVE_BACK=$(have "$BACK_KO")
HAVE_FRONT=$(have "$FRONT_KO")
HAVE_HOSTILE=$(have "$HOSTILE_KO")
HAVE_FLOOD=$(have "$FLOOD_KO")
HAVE_BADBACK=$(have "$BADBACK_KO")
RIG_BADBACK_CASES="${XCUDA_RIG_BADBACK:-}"
HAVE_XCUDAD=$(have "$XCUDAD")
HAVE_XCUDACTL=$(have "$XCUDACTL")
HAVE_RING_TEST=$(have "$RING_TEST")
RIG_PINGPONG=${XCUDA_RIG_PINGPONG:-1000000}
HAVE_GUESTLIB=$(have "$GUESTLIB")
HAVE_TESTS=$( [ -s "$OUT/programs" ] && echo 1 || echo 0)
HAVE_DEMO=$(have "$DEMO")
HAVE_BENCH=$( [ "$RIG_MODE" = gpu ] && have "$BENCH" || echo 0)
HAVE_HOLD=$( [ "$RIG_MODE" = gpu ] && have "$HOLD" || echo 0)
EOF
pack "$R" "$OUT/dom0.cpio" none
log "done: $(du -h "$OUT/dom0.cpio" | cut -f1) Dom0 initramfs," \
	"$(du -h "$OUT/domU.cpio.gz" | cut -f1) DomU initramfs (gzip)"
