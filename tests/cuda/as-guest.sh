#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs a command as a DomU sees the host: in a mount namespace of its own
# where the GPU's device nodes and the driver's user-space libraries are
# /dev/null, so that nothing reaches the GPU except through xcuda.
#
#   tests/cuda/as-guest.sh --check      exit 0 if this machine can do it
#   tests/cuda/as-guest.sh CMD [ARG...]
#
# Needs root and util-linux's unshare.  xcudad and its workers must run
# outside (start them first).
set -euo pipefail

if [ "${1:-}" = --check ]; then
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
		unshare -m true 2>/dev/null
	exit
fi
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARG...]" >&2; exit 2; }

# shellcheck disable=SC2016
exec unshare -m --propagation private -- bash -c '
	set -e
	hide() { [ -e "$1" ] && mount --bind /dev/null "$1"; return 0; }
	for f in /dev/nvidia*; do
		[ -c "$f" ] && hide "$f"
	done
	# The driver libraries, by every name the loader could find them.
	for f in $(ldconfig -p | awk "/lib(cuda|nvidia-ml)\\.so/ {print \$NF}") \
		 $(find /usr/lib /usr/lib64 /usr/local/nvidia /lib \
			-name "libcuda.so*" -o -name "libnvidia-ml.so*" \
			2>/dev/null); do
		hide "$(readlink -f "$f")"
	done
	exec "$@"
' as-guest "$@"
