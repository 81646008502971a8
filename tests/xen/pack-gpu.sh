#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Packs the rig for a GPU host, which has no Debian packages:
#
#   tests/xen/pack-gpu.sh IMAGES_DIR FILE
#
# FILE (a .tar.xz) holds Debian's qemu-system-x86_64 with the libraries
# it loads (not glibc's: the host has its own), its firmware and its TCG
# accelerator (a loadable module in Debian's build), and the images of
# IMAGES_DIR that mkimages.sh made with RIG_MODE=gpu, with the key Dom0's
# xcudad proves to the host's.  gpu-rig.sh boots it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 IMAGES_DIR FILE" >&2; exit 2; }
img=$(cd "$1" && pwd)
out=$2
for f in xen vmlinuz dom0.cpio gpu.key; do
	[ -e "$img/$f" ] || { echo "$0: $img/$f is missing (mkimages.sh with RIG_MODE=gpu)" >&2; exit 1; }
done
qemu=$(command -v qemu-system-x86_64) || { echo "$0: no qemu-system-x86_64" >&2; exit 1; }
tcg=/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/lib" "$t/fw" "$t/mod"
cp "$qemu" "$t/qemu-system-x86_64"
ldd "$qemu" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
	grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv)\.so' |
	while read -r l; do cp -L "$l" "$t/lib/"; done
[ -e "$tcg" ] && cp "$tcg" "$t/mod/"
# the BIOS, and the option ROMs that load a multiboot kernel
for f in /usr/share/seabios/bios-256k.bin \
	/usr/share/qemu/{linuxboot_dma.bin,linuxboot.bin,multiboot.bin,multiboot_dma.bin,kvmvapic.bin}; do
	[ -e "$f" ] && cp -L "$f" "$t/fw/"
done
cp "$img/xen" "$img/vmlinuz" "$img/dom0.cpio" "$img/gpu.key" "$t/"
tar -C "$t" -cf - . | xz -T0 -6 >"$out"
echo "pack-gpu: $out, $(du -h "$out" | cut -f1)"
