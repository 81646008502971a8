#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Installs what the kernel modules and the Xen rig (tests/xen/run.sh)
# need on Debian 12: kernel headers and source (checkpatch), QEMU, Xen
# (and Xen's QEMU, the device model of the rig's HVM guest).
# Idempotent: apt runs only when something is missing.
set -euo pipefail

# shellcheck source=tools/need.sh
. "$(dirname "$0")/../../tools/need.sh"
newest_kver() {
	find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' -printf '%f\n' \
		2>/dev/null | sort -V | tail -n 1 || true
}
need qemu-system-x86 command -v qemu-system-x86_64
need xen-hypervisor-4.17-amd64 test -e /boot/xen-4.17-amd64.gz
need xen-utils-4.17 test -x /usr/lib/xen-4.17/bin/xl
need xenstore-utils test -x /usr/bin/xenstore
# The HVM pass's device model and firmware (XCUDA_RIG_HVM=1): QEMU at
# libxl's path, SeaBIOS, and QEMU's option ROM for a direct kernel boot.
need qemu-system-xen test -x /usr/libexec/xen-qemu-system-i386
need seabios test -e /usr/share/seabios/bios-256k.bin
need qemu-system-data test -e /usr/share/qemu/linuxboot.bin
need busybox-static sh -c 'busybox --list | grep -qx insmod'
need cpio command -v cpio
need kmod command -v modinfo
need build-essential command -v gcc
need build-essential command -v make
need xz-utils command -v xz
need bc command -v bc
# checkpatch.pl (tools/checkpatch.sh, for the modules) is in the source.
need linux-source sh -c 'ls /usr/src/linux-source-*.tar.xz'

# The kernel the rig boots and the headers its modules build against must
# be one release: both come from the metapackages, in one apt call.
kver=$(newest_kver)
if [ -z "$kver" ] || [ ! -e "/boot/vmlinuz-$kver" ] ||
   [ ! -d "/lib/modules/$kver/build" ]; then
	missing+=(linux-image-amd64 linux-headers-amd64)
fi

if [ "${#missing[@]}" -gt 0 ]; then
	need_install
	kver=$(newest_kver)
fi
if [ ! -d "/lib/modules/$kver/build" ]; then
	echo "deps: no headers for kernel $kver after installing" >&2
	exit 1
fi
echo "deps: the Xen rig has what it needs (kernel $kver)"
