#!/usr/bin/env bash
# Installs what building and testing xcuda needs on Debian 12, once.
# Idempotent: it only calls apt-get when something is missing.
set -euo pipefail

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
pkgs=(build-essential libxen-dev binutils gawk)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "deps: installing ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x "$CUDA_HOME/bin/nvcc" ] || [ ! -e "$CUDA_HOME/lib64/libcudart.so.13" ]; then
	echo "deps: the CUDA 13 toolkit is needed at $CUDA_HOME (set CUDA_HOME);" \
		"Debian does not package CUDA 13" >&2
	exit 1
fi
