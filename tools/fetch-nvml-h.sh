#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NVML's header, nvml.h, for building xcuda's libnvidia-ml.so.1 and the
# worker's NVML calls, where the CUDA toolkit has none (its nvml.h comes
# with the driver's development package, or PyPI's nvidia-nvml-dev wheel).
#
#   tools/fetch-nvml-h.sh DIR
#
# Writes DIR/nvml.h from the nvidia-nvml-dev wheel of CUDA 13.0, pinned
# by its hash: pip checks the download against it.  Idempotent.
set -euo pipefail

WHEEL_VERSION=13.0.87
WHEEL_SHA256=082871368275cf6620fc900f55d8eaf2563b263a38a00a5168e9650bce963ba1

[ $# -eq 1 ] || { echo "usage: ${0##*/} DIR" >&2; exit 2; }
dir=$1
[ -e "$dir/nvml.h" ] && exit 0
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'nvidia-nvml-dev==%s --hash=sha256:%s\n' "$WHEEL_VERSION" \
	"$WHEEL_SHA256" > "$tmp/req.txt"
if ! python3 -m pip download -q --no-deps --only-binary :all: \
	--require-hashes -r "$tmp/req.txt" -d "$tmp" >&2; then
	echo "${0##*/}: cannot download nvidia-nvml-dev $WHEEL_VERSION" \
		"(python3-pip and PyPI are needed; or make NVML_INCLUDE=DIR" \
		"with an nvml.h in DIR)" >&2
	exit 1
fi
python3 - "$tmp" "$dir" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + '/nvidia_nvml_dev-*.whl')[0]
with zipfile.ZipFile(wheel) as z:
    data = z.read('nvidia/cu13/include/nvml.h')
with open(sys.argv[2] + '/nvml.h.tmp', 'wb') as f:
    f.write(data)
PY
mv "$dir/nvml.h.tmp" "$dir/nvml.h"
