#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Checks the rig for a GPU host without one:
#
#   tests/xen/pack-test.sh BUILD_DIR
#
# makes the pack (run.sh --pack), then checks that it holds what the GPU
# host needs (QEMU with its libraries, firmware and TCG module; images
# made for the GPU host's rig), that its QEMU starts from the pack alone
# and offers TCG, and that gpu-measure.sh reads the rig's lines right.
# Prints PASS/FAIL per check and last "N passed, N failed".
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
B=$(cd "$1" && pwd)
pass=0 fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { # NAME CMD...
	local name=$1
	shift
	if "$@" >"$t/out" 2>&1; then
		echo "PASS $name"
		pass=$((pass + 1))
	else
		echo "FAIL $name: $(tail -n 3 "$t/out" | tr '\n' ' ')"
		fail=$((fail + 1))
	fi
}
has() { [ -e "$t/p/$1" ] || { echo "no $1 in the pack"; return 1; }; }

check "pack made" "$HERE/run.sh" "$B" --pack "$t/rig.tar.xz"
mkdir -p "$t/p"
check "pack unpacks" tar -xJf "$t/rig.tar.xz" -C "$t/p"
for f in qemu-system-x86_64 mod/accel-tcg-x86_64.so fw/bios-256k.bin \
	fw/multiboot_dma.bin xen vmlinuz dom0.cpio gpu.key; do
	check "pack holds $f" has "$f"
done
# QEMU from the pack alone: its libraries, its modules, its firmware
qemu() {
	env -i QEMU_MODULE_DIR="$t/p/mod" LD_LIBRARY_PATH="$t/p/lib" \
		"$t/p/qemu-system-x86_64" -L "$t/p/fw" "$@"
}
check "packed QEMU starts" qemu -version
# a paused machine under TCG: still running after 3 s means its
# accelerator loaded (without the module QEMU exits at once)
tcg_starts() {
	timeout 3 env -i QEMU_MODULE_DIR="$t/p/mod" LD_LIBRARY_PATH="$t/p/lib" \
		"$t/p/qemu-system-x86_64" -L "$t/p/fw" -machine pc -accel tcg \
		-nodefaults -display none -monitor none -serial none -S </dev/null
	[ $? -eq 124 ]
}
check "packed QEMU runs TCG" tcg_starts

# The images: Dom0 set up to relay, the DomU with what the GPU run needs
mkdir -p "$t/dom0" "$t/domU"
(cd "$t/dom0" && cpio -id --quiet <"$t/p/dom0.cpio") 2>/dev/null
(cd "$t/domU" && gzip -dc "$t/dom0/boot/domU/initrd.img" | cpio -id --quiet) 2>/dev/null
check "Dom0 in GPU mode" grep -qx 'RIG_MODE=gpu' "$t/dom0/etc/xcuda-rig.conf"
check "Dom0 has the NIC" test -s "$t/dom0/lib/modules/$(sed -n 's/^KVER=//p' "$t/dom0/etc/xcuda-rig.conf")/net/e1000.ko"
check "Dom0 has the key, 0600" bash -c "[ \"\$(stat -c %a '$t/dom0/etc/xcuda/gpu.key')\" = 600 ] && cmp -s '$t/dom0/etc/xcuda/gpu.key' '$t/p/gpu.key'"
check "Dom0 has xcudactl and the benchmark" test -x "$t/dom0/usr/bin/xcudactl" -a -x "$t/dom0/opt/xcuda/bench/xcuda-bench"
check "Dom0 has the list of programs" test -s "$t/dom0/opt/xcuda/tests/cuda/PROGRAMS"
check "DomU has the benchmark" test -x "$t/domU/opt/xcuda/bench/xcuda-bench"
check "DomU has no real runtime" bash -c "! find '$t/domU' -name 'libcudart.so*' -path '*cuda/lib64*' | grep -q ."
check "DomU has the driver programs' files" test -s "$t/domU/opt/xcuda/tests/cuda/driver_api.fatbin"

# gpu-measure.sh on the lines a rig writes
mkdir -p "$t/r"
cat >"$t/r/serial.clean" <<'LOG'
RIG-PING: domU: ping ok: xen transport, 2000 round trips: median 2542.37 us, p99 6253.80 us, this process's CPU 1.00 us each
RIG-PING: domU: ping stats (this process's side only): 2000 requests, 2000 bells rung, 1614 sleeps, copies per request: 1 in, 1 out
RIG-COUNTERS: domU-ping: xcudad[9]: info: session 0000013b: counters: ring: 2000 requests taken, 2000 responses pushed, 1600 bells rung, 4000 sleeps
RIG-COUNTERS: domU-ping: xcudad[9]: info: session 0000013b: counters: link: 336144 bytes in over 4000 syscalls, 656528 bytes out over 2000 syscalls
RIG-BENCH: domU: metric,size_bytes,value,unit
RIG-BENCH: domU: launch_sync,0,2684.3,us
LOG
printf 'metric,size_bytes,value,unit\nlaunch_sync,0,8.0,us\n' >"$t/r/native.csv"
mkdir -p "$t/r/bench" && mv "$t/r/native.csv" "$t/r/bench/"
"$HERE/gpu-measure.sh" "$t/r" >"$t/measure" 2>&1
check "gpu-measure: the DomU's ping" grep -Eq "^rig DomU: .* +2542.37 +6253.80 " "$t/measure"
check "gpu-measure: per request" grep -Eq "^domU-ping +2000 +0.800 +2.000 +3.000$" "$t/measure"
check "gpu-measure: the benchmark against native" grep -Eq "^launch_sync .* 2684.3 \(335.54\)$" "$t/measure"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
