#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rig-rmmod MODULE: unloads a xenbus driver module, in both of the rig's
# domains.  Linux (6.1) holds a reference on a xenbus driver's module for
# as long as the driver is bound to a device (xenbus_dev_probe), so a
# plain rmmod fails with EAGAIN while a device exists.  This unbinds the
# module's devices through sysfs first (the driver's remove runs, as it
# would on rmmod), then unloads it.

[ $# -eq 1 ] || { echo "usage: rig-rmmod MODULE" >&2; exit 2; }
mod=$(echo "$1" | tr - _)
for drv in /sys/bus/xen/drivers/* /sys/bus/xen-backend/drivers/*; do
	[ -L "$drv/module" ] || continue
	case $(readlink "$drv/module") in
	*/"$mod") ;;
	*) continue ;;
	esac
	for dev in "$drv"/*; do
		# the bound devices are the symlinks other than "module"
		if [ ! -L "$dev" ] || [ "${dev##*/}" = module ]; then
			continue
		fi
		echo "rig-rmmod: unbinding ${dev##*/} from ${drv##*/}"
		echo "${dev##*/}" >"$drv/unbind" || exit 1
	done
done
rmmod "$mod"
