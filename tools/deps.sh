#!/usr/bin/env bash
# Installs what building and testing xcuda needs on Debian 12, once.
# Idempotent: it only calls apt-get when something is missing.
set -euo pipefail

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# What is needed, by what it provides: a machine that has it some other
# way (headers copied in, another awk) needs no package and no registry.
missing=()
need() { # PACKAGE TEST...
	local p=$1
	shift
	"$@" >/dev/null 2>&1 || missing+=("$p")
}
need build-essential command -v cc
need build-essential command -v make
need libxen-dev test -e /usr/include/xen/io/ring.h
need binutils command -v nm
need gawk command -v awk
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | sed '/^$/d')
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
