# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Sourced by the dependency installers: what is needed is named by what
# it provides, so a machine that has it some other way (headers copied
# in, another awk) needs no package and no registry.
#
#   need PACKAGE TEST...   PACKAGE is missing unless TEST succeeds
#   need_install           installs the missing ones (apt-get update
#                          first; INITRD=No: no initramfs is ever built
#                          for a kernel package here); no-op if none

missing=()

need() {
	local p=$1
	shift
	"$@" >/dev/null 2>&1 || missing+=("$p")
}

need_install() {
	local sudo=
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | sed '/^$/d')
	[ "${#missing[@]}" -gt 0 ] || return 0
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "deps: installing ${missing[*]}"
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive INITRD=No \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
