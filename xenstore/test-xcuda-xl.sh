#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Tests of xcuda-xl without Xen: xl and the xenstore clients are replaced
# by fakes that keep the store in a directory tree and log every change,
# so the tests check what was written, with which permissions and in
# which order.  Runs the tool under each shell given (default: every one
# of sh, dash, bash and busybox sh found here).
#
#   xenstore/test-xcuda-xl.sh [-v] [SHELL...]
#
# Prints FAIL per failed check (-v: PASS per check too) and, last,
# "N passed, N failed".

VERBOSE=0
if [ "${1:-}" = -v ]; then
	VERBOSE=1
	shift
fi
HERE=$(cd "$(dirname "$0")" && pwd)
TOOL=$HERE/xcuda-xl
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT
PASS=0
FAILN=0

# ------------------------------------------------------------------ fakes

mkdir -p "$T/bin"
# The store: node /a/b is the directory $XS/a/b, value in .v, permissions
# in .p.  A new node takes its parent's permissions, as in xenstored.
cat >"$T/bin/fakexs" <<'EOF'
#!/bin/sh
XS=$FAKE_XS
log() { echo "$*" >>"$FAKE_LOG"; }
mk() { # PATH: create it and its missing parents, inheriting permissions
	[ -d "$XS$1" ] && return 0
	mk "${1%/*}"
	mkdir "$XS$1"
	cp "$XS${1%/*}/.p" "$XS$1/.p" 2>/dev/null
	: >"$XS$1/.v"
}
cmd=${0##*/}
case $cmd in
xenstore-read)
	[ -f "$XS$1/.v" ] || { echo "couldn't read path $1" >&2; exit 1; }
	cat "$XS$1/.v"; echo ;;
xenstore-exists) [ -d "$XS$1" ] ;;
xenstore-list)
	[ -d "$XS$1" ] || exit 1
	ls "$XS$1" ;;
xenstore-write)
	case ${FAKE_FAIL_WRITE:-} in
	?*) case " $* " in *"$FAKE_FAIL_WRITE"*) echo "fake write failure" >&2; exit 1 ;; esac ;;
	esac
	# one transaction: one log line
	txn="write"
	while [ $# -ge 2 ]; do
		mk "$1"
		printf '%s' "$2" >"$XS$1/.v"
		txn="$txn $1=$2"
		shift 2
	done
	log "$txn" ;;
xenstore-rm)
	[ -d "$XS$1" ] || exit 1
	rm -rf "${XS:?}$1"
	log "rm $1" ;;
xenstore-chmod)
	r=0
	[ "$1" = -r ] && { r=1; shift; }
	p=$1; shift
	[ -d "$XS$p" ] || exit 1
	if [ $r = 1 ]; then
		find "$XS$p" -type d | while read -r d; do echo "$*" >"$d/.p"; done
	else
		echo "$*" >"$XS$p/.p"
	fi
	log "chmod $p $*" ;;
esac
EOF
cat >"$T/bin/xl" <<'EOF'
#!/bin/sh
XS=$FAKE_XS
log() { echo "$*" >>"$FAKE_LOG"; }
case $1 in
domid)
	for d in "$XS"/local/domain/*; do
		[ "$(cat "$d/name/.v" 2>/dev/null)" = "$2" ] && { echo "${d##*/}"; exit 0; }
	done
	echo "Can't get domid of domain name '$2'" >&2; exit 1 ;;
create)
	shift
	log "xl create $*"
	[ -n "${FAKE_XL_FAIL:-}" ] && { echo "fake xl create failure" >&2; exit 3; }
	name=
	for a; do
		case $a in
		name=*) name=$(echo "${a#name=}" | tr -d "\"'") ;;
		-*) ;;
		*) [ -f "$a" ] && name=$(sed -n 's/^name *= *"\(.*\)"/\1/p' "$a") ;;
		esac
	done
	id=1
	while [ -d "$XS/local/domain/$id" ]; do id=$((id + 1)); done
	mkdir -p "$XS/local/domain/$id/name" "$XS/local/domain/$id/device"
	printf '%s' "$name" >"$XS/local/domain/$id/name/.v"
	: >"$XS/local/domain/$id/.v"
	: >"$XS/local/domain/$id/device/.v"
	echo "n0 r$id" >"$XS/local/domain/$id/.p"
	echo "n0 r$id" >"$XS/local/domain/$id/device/.p"
	;;
unpause | destroy)
	log "xl $*"
	if [ "$1" = destroy ]; then
		rm -rf "${XS:?}/local/domain/$2"
	fi ;;
*) echo "fake xl: $*" >&2; exit 1 ;;
esac
EOF
chmod +x "$T/bin/fakexs" "$T/bin/xl"
for c in read exists list write rm chmod; do
	ln -s fakexs "$T/bin/xenstore-$c"
done

# A fresh store: Dom0 and domain 1 ("guest1").
reset_store() {
	rm -rf "$T/xs" "$T/log"
	for d in 0 1; do
		mkdir -p "$T/xs/local/domain/$d/name" "$T/xs/local/domain/$d/device"
		: >"$T/xs/local/domain/$d/.v"
		echo "n0 r$d" >"$T/xs/local/domain/$d/.p"
		echo "n0 r$d" >"$T/xs/local/domain/$d/device/.p"
		: >"$T/xs/local/domain/$d/device/.v"
	done
	printf Domain-0 >"$T/xs/local/domain/0/name/.v"
	printf guest1 >"$T/xs/local/domain/1/name/.v"
	mkdir -p "$T/xs/local/domain/0/backend"
	echo n0 >"$T/xs/local/domain/0/backend/.p"
	: >"$T/log"
}

export FAKE_XS="$T/xs" FAKE_LOG="$T/log"
export PATH="$T/bin:$PATH"

# ------------------------------------------------------------------ checks

ok() {
	[ "$VERBOSE" = 0 ] || echo "PASS [$SH] $1"
	PASS=$((PASS + 1))
}
ko() { echo "FAIL [$SH] $1"; FAILN=$((FAILN + 1)); }

# xx ARGS...: the tool under the shell in test; status in RC, output in
# $T/out (stdout) and $T/err.
xx() {
	# shellcheck disable=SC2086 # "busybox sh" is two words
	$SH "$TOOL" "$@" >"$T/out" 2>"$T/err"
	RC=$?
}
expect_rc() { # WHAT RC
	if [ "$RC" = "$2" ]; then ok "$1"; else ko "$1: status $RC, not $2: $(cat "$T/err")"; fi
}
expect_err() { # WHAT TEXT
	if grep -qF -- "$2" "$T/err"; then ok "$1"; else ko "$1: no '$2' in: $(cat "$T/err")"; fi
}
expect_out() { # WHAT TEXT
	if grep -qF -- "$2" "$T/out"; then ok "$1"; else ko "$1: no '$2' in: $(cat "$T/out")"; fi
}
val() { cat "$T/xs$1/.v" 2>/dev/null; }
perms() { cat "$T/xs$1/.p" 2>/dev/null; }
expect_val() { # PATH VALUE
	if [ "$(val "$1")" = "$2" ]; then ok "$1 = $2"; else ko "$1 = '$(val "$1")', not '$2'"; fi
}
expect_perms() { # PATH PERMS
	if [ "$(perms "$1")" = "$2" ]; then ok "$1 perms $2"; else ko "$1 perms '$(perms "$1")', not '$2'"; fi
}
gone() { # PATH
	if [ -d "$T/xs$1" ]; then ko "$1 still exists"; else ok "$1 removed"; fi
}
# line NUMBER-OF-LOG-LINE-MATCHING PATTERN
logline() { grep -n -- "$1" "$T/log" | head -n 1 | cut -d: -f1; }
before() { # WHAT A B: the log has A before B
	a=$(logline "$2")
	b=$(logline "$3")
	if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]; then
		ok "$1"
	else
		ko "$1 ('$2' at ${a:-none}, '$3' at ${b:-none})"
	fi
}

FE=/local/domain/1/device/xcuda/0
BE=/local/domain/0/backend/xcuda/1/0

run_checks() {
	# ---- parsing
	cat >"$T/good.cfg" <<'EOF'
# a config with every kind of value
name = "guest2"	# a comment
memory = 256 ; vcpus = 2
extra = "console=hvc0 # not a comment, a string"
cpus = [ "0-1", '2' ]
xcuda = [ 'backend=0, sessions=16, arena=64M',
          "devid=1,sessions = 4 ,arena=4096",  # second device
	  'devid=2, backend=Domain-0, arena=4G',
        ]
EOF
	xx check "$T/good.cfg"
	expect_rc "check: a good config" 0
	expect_out "check: name" "name: guest2"
	expect_out "check: device 0" "xcuda device 0: backend=0 sessions=16 arena=64M (67108864 bytes)"
	expect_out "check: device 1" "xcuda device 1: backend=0 sessions=4 arena=4K (4096 bytes)"
	expect_out "check: device 2" "xcuda device 2: backend=Domain-0 sessions=16 arena=4G (4294967296 bytes)"
	xx check "$T/good.cfg" 'xcuda=["sessions=1"]' 'name="other"'
	expect_out "check: KEY=VALUE replaces xcuda" "xcuda device 0: backend=0 sessions=1 arena=64M"
	expect_out "check: KEY=VALUE replaces name" "name: other"
	xx check "$T/good.cfg" "xcuda+=['devid=7']"
	expect_out "check: += appends" "xcuda device 7: backend=0 sessions=16 arena=64M"
	expect_out "check: += keeps" "xcuda device 2:"
	printf 'name="x"\nxcuda = [ "" ]\n' >"$T/empty.cfg"
	xx check "$T/empty.cfg"
	expect_out "check: an empty entry is all defaults" "xcuda device 0: backend=0 sessions=16 arena=64M"
	printf 'name="x"\nxcuda = [ "upstream=gpu1.example:7700", %s ]\n' \
	       '"devid=1, upstream=[2001:db8::1]:07700", "devid=2, upstream=10.0.0.2:1"' \
	       >"$T/up.cfg"
	xx check "$T/up.cfg"
	expect_rc "check: upstream" 0
	expect_out "check: upstream, a DNS name" \
		"xcuda device 0: backend=0 sessions=16 arena=64M (67108864 bytes) upstream=gpu1.example:7700"
	expect_out "check: upstream, IPv6, the port in decimal" \
		"xcuda device 1: backend=0 sessions=16 arena=64M (67108864 bytes) upstream=[2001:db8::1]:7700"
	expect_out "check: upstream, IPv4" "arena=64M (67108864 bytes) upstream=10.0.0.2:1"
	printf 'name="x"\nxcuda = [ "upstream=%s:65535" ]\n' \
	       a23456789012345678901234567890123456789012345678901234567 >"$T/up.cfg"
	xx check "$T/up.cfg"
	expect_out "check: upstream of 63 characters" \
		"upstream=a23456789012345678901234567890123456789012345678901234567:65535"
	printf 'name="x"\nxcuda = [ "sessions=010, arena=010M, devid=010" ]\n' >"$T/dec.cfg"
	xx check "$T/dec.cfg"
	expect_out "check: leading zeros are decimal" \
		"xcuda device 10: backend=0 sessions=10 arena=10M (10485760 bytes)"
	printf 'name="x"\nxcuda = [ "gpumem=8G", %s ]\n' \
	       '"devid=1, gpumem=4096", "devid=2, gpumem=1536k", "devid=3, gpumem=2T, upstream=h:1", "devid=4, gpumem=1024T"' \
	       >"$T/gm.cfg"
	xx check "$T/gm.cfg"
	expect_rc "check: gpumem" 0
	expect_out "check: gpumem with G" \
		"xcuda device 0: backend=0 sessions=16 arena=64M (67108864 bytes) gpumem=8G (8589934592 bytes)"
	expect_out "check: gpumem in bytes" "gpumem=4K (4096 bytes)"
	expect_out "check: gpumem with k" "gpumem=1536K (1572864 bytes)"
	expect_out "check: gpumem with T, and an upstream" \
		"gpumem=2T (2199023255552 bytes) upstream=h:1"
	expect_out "check: the largest gpumem" "gpumem=1024T (1125899906842624 bytes)"
	printf 'name="x"\n' >"$T/none.cfg"
	xx check "$T/none.cfg"
	expect_out "check: no xcuda line" "no xcuda devices"
	for bad in 'sessions=0|sessions must be 1 to 256' \
		   'sessions=257|sessions must be 1 to 256' \
		   'sessions=x|sessions must be a decimal number' \
		   'arena=5000|arena must be a multiple of 4K' \
		   'arena=8G|arena must be a multiple of 4K from 4K to 4G' \
		   'arena=0|arena must be a multiple of 4K' \
		   'arena=64T|must be a decimal number' \
		   'arena=999999999999999999|must be a decimal number' \
		   'devid=70000|devid must be 0 to 65535' \
		   'backend=a b|is not a domain id or name' \
		   'backend=40000|is not a domain id' \
		   'colour=red|unknown key "colour"' \
		   'sessions=1, sessions=2|sessions given twice' \
		   'sessions|is not KEY=VALUE' \
		   'arena=|arena has no value' \
		   'upstream=gpu1.example|upstream "gpu1.example" is not HOST:PORT' \
		   'upstream=:7700|is not HOST:PORT' \
		   'upstream=[::1]|is not HOST:PORT' \
		   'upstream=gpu1:0|upstream port must be 1 to 65535, not "0"' \
		   'upstream=gpu1:65536|upstream port must be 1 to 65535' \
		   'upstream=gpu1:http|upstream port must be 1 to 65535' \
		   'upstream=gpu1:77:00|an IPv6 address goes in brackets' \
		   'upstream=::1:7700|an IPv6 address goes in brackets' \
		   'upstream=[1:2:3]:80|"1:2:3" is not an IPv6 address' \
		   'upstream=[1::2::3]:80|is not an IPv6 address' \
		   'upstream=[12345::1]:80|is not an IPv6 address' \
		   'upstream=[gpu1]:80|is not an IPv6 address' \
		   'upstream=300.1.2.3:80|"300.1.2.3" is not an IPv4 address' \
		   'upstream=1.2.3:80|is not an IPv4 address' \
		   'upstream=010.0.0.1:80|is not an IPv4 address' \
		   'upstream=gpu1..example:80|is not a host name or address' \
		   'upstream=-gpu1:80|is not a host name or address' \
		   'upstream=gpu1 x:80|has a character other than' \
		   'upstream=gpu/1:80|has a character other than' \
		   'upstream=a234567890123456789012345678901234567890123456789012345678901:80|at most 63 characters, not 64' \
		   'upstream=h:1, upstream=h:2|upstream given twice' \
		   'upstream=|upstream has no value' \
		   'gpumem=0|gpumem must be from 4K to 1024T' \
		   'gpumem=4095|gpumem must be from 4K to 1024T' \
		   'gpumem=1025T|gpumem must be from 4K to 1024T' \
		   'gpumem=99999999999999999999G|gpumem must be from 4K to 1024T' \
		   'gpumem=8GB|gpumem must be a size in bytes, or with a K, M, G or T suffix' \
		   'gpumem=1.5G|gpumem must be a size in bytes' \
		   'gpumem=-1G|gpumem must be a size in bytes' \
		   'gpumem=G|gpumem must be a size in bytes' \
		   'gpumem=8P|gpumem must be a size in bytes' \
		   'gpumem=|gpumem has no value' \
		   'gpumem=1G, gpumem=2G|gpumem given twice'; do
		printf 'name="x"\nxcuda = [ "%s" ]\n' "${bad%%|*}" >"$T/bad.cfg"
		xx check "$T/bad.cfg"
		expect_rc "check: rejects ${bad%%|*}" 2
		expect_err "check: says why for ${bad%%|*}" "${bad#*|}"
	done
	printf 'name="x"\nxcuda = [ "devid=1", "devid=1" ]\n' >"$T/bad.cfg"
	xx check "$T/bad.cfg"
	expect_err "check: a devid twice" "devid 1 given twice"
	printf 'name="x"\nxcuda = [ "a=1\n' >"$T/bad.cfg"
	xx check "$T/bad.cfg"
	expect_err "check: an unterminated string, with its line" "bad.cfg:2: unterminated string"
	printf 'name="x"\nxcuda = [ 1, 2 ]\n' >"$T/bad.cfg"
	xx check "$T/bad.cfg"
	expect_err "check: numbers are not entries" "xcuda must be a list of strings"
	printf 'name="x"\nxcuda = "arena=8K"\n' >"$T/one.cfg"
	xx check "$T/one.cfg"
	expect_out "check: a lone string is one entry" "xcuda device 0: backend=0 sessions=16 arena=8K"
	printf 'name="x"\nmemory = (256)\n' >"$T/bad.cfg"
	xx check "$T/bad.cfg"
	expect_err "check: a syntax error elsewhere" "bad.cfg:2: syntax error"
	xx check "$T/nonexistent.cfg"
	expect_rc "check: a missing file" 2

	# ---- attach
	reset_store
	xx attach guest1 'backend=0, sessions=8, arena=128M'
	expect_rc "attach: by name" 0
	expect_val "$FE/backend" "$BE"
	expect_val "$FE/backend-id" 0
	expect_val "$FE/state" 1
	expect_val "$BE/frontend" "$FE"
	expect_val "$BE/frontend-id" 1
	expect_val "$BE/online" 1
	expect_val "$BE/state" 1
	expect_val "$BE/max-sessions" 8
	expect_val "$BE/max-arena-bytes" 134217728
	if [ -d "$T/xs$BE/upstream" ]; then
		ko "attach: an upstream node without upstream="
	else
		ok "attach: no upstream node without upstream="
	fi
	expect_perms "$FE" "n1 r0"
	expect_perms "$FE/state" "n1 r0"
	expect_perms "$FE/backend" "n1 r0"
	expect_perms "$BE" "n0 r1"
	expect_perms "$BE/state" "n0 r1"
	expect_perms "$BE/max-arena-bytes" "n0 r1"
	before "attach: frontend permissions before its state" "chmod $FE" " $FE/state="
	before "attach: frontend before backend" " $FE/backend=" " $BE/frontend="
	before "attach: backend permissions before its state" "chmod $BE" " $BE/state="
	if grep -q "^write $FE/state=1 $BE/state=1\$" "$T/log"; then
		ok "attach: both states in one transaction"
	else
		ko "attach: the states were not written together: $(cat "$T/log")"
	fi
	xx attach 1
	expect_rc "attach: a second device 0 is refused" 1
	expect_err "attach: says how to fix it" "detach 1 0 first"
	xx attach 1 'devid=3'
	expect_rc "attach: by id, devid 3, defaults" 0
	expect_val "/local/domain/0/backend/xcuda/1/3/max-sessions" 16
	expect_val "/local/domain/0/backend/xcuda/1/3/max-arena-bytes" 67108864
	reset_store
	xx attach guest1 'sessions=8, upstream=[::1]:7700'
	expect_rc "attach: upstream" 0
	expect_val "$BE/upstream" "[::1]:7700"
	expect_val "$BE/max-sessions" 8
	expect_perms "$BE/upstream" "n0 r1"
	before "attach: upstream before the backend's permissions" \
		" $BE/upstream=" "chmod $BE"
	before "attach: upstream before the states" " $BE/upstream=" " $BE/state="
	expect_err "attach: says the upstream" "upstream [::1]:7700)"
	xx list
	expect_out "list: the upstream" "[::1]:7700"
	reset_store
	xx attach guest1 'gpumem=8G'
	expect_rc "attach: gpumem" 0
	expect_val "$BE/max-gpumem-bytes" 8589934592
	expect_perms "$BE/max-gpumem-bytes" "n0 r1"
	before "attach: gpumem before the states" " $BE/max-gpumem-bytes=" " $BE/state="
	expect_err "attach: says the gpumem" "gpumem 8G"
	xx list
	expect_out "list: the gpumem" " 8G "
	reset_store
	xx attach guest1
	if grep -q "max-gpumem-bytes" "$T/log"; then
		ko "attach: no gpumem node without gpumem="
	else
		ok "attach: no gpumem node without gpumem="
	fi
	reset_store
	xx attach 9
	expect_rc "attach: no such domain" 1
	xx attach guest1 'sessions=999'
	expect_rc "attach: a bad spec" 2
	if [ ! -s "$T/log" ]; then ok "attach: a bad spec writes nothing"; else ko "attach: a bad spec wrote: $(cat "$T/log")"; fi
	xx attach guest1 'backend=7'
	expect_rc "attach: a missing backend domain" 1
	expect_err "attach: names the backend" "backend domain '7' does not exist"
	xx attach 1 'backend=1'
	expect_rc "attach: a domain is not its own backend" 1
	reset_store
	FAKE_FAIL_WRITE="$BE/frontend" xx attach 1
	expect_rc "attach: a failing write" 1
	gone "$FE"
	gone "$BE"

	# ---- detach
	reset_store
	xx attach 1
	printf 6 >"$T/xs$BE/state/.v"
	xx detach 1
	expect_rc "detach: a closed backend" 0
	gone "$FE"
	gone "$BE"
	gone "/local/domain/0/backend/xcuda/1"
	expect_val "/local/domain/0/name" Domain-0
	reset_store
	xx attach 1
	xx detach -t 1 guest1 0
	expect_rc "detach: a backend that does not close" 0
	expect_err "detach: warns" "did not close in 1 s"
	before "detach: online=0 and Closing first" "write $BE/online=0 $BE/state=5" "rm $BE"
	before "detach: backend removed before frontend" "rm $BE" "rm $FE"
	gone "$FE"
	reset_store
	xx attach 1
	# The guest owns its frontend directory and may point "backend" at
	# any node: detach must not follow it.
	mkdir -p "$T/xs/local/domain/0/backend/vbd/1/51712"
	printf /local/domain/0/backend/vbd/1/51712 >"$T/xs$FE/backend/.v"
	xx detach -f 1
	expect_rc "detach -f" 0
	if [ -d "$T/xs/local/domain/0/backend/vbd/1/51712" ]; then
		ok "detach: ignores the guest's backend node"
	else
		ko "detach: removed what the guest's backend node named"
	fi
	gone "$BE"
	xx detach 1 0
	expect_rc "detach: no such device" 1
	xx detach 5
	expect_rc "detach: no such domain" 1
	expect_err "detach: points at gc" "xcuda-xl gc"

	# ---- gc and list
	reset_store
	xx attach 1
	mkdir -p "$T/xs/local/domain/0/backend/xcuda/7/0"
	xx list
	expect_rc "list" 0
	expect_out "list: the live domain" "guest1"
	expect_out "list: the gone domain" "(gone)"
	xx gc
	expect_rc "gc" 0
	gone "/local/domain/0/backend/xcuda/7"
	if [ -d "$T/xs$BE" ]; then ok "gc: keeps the live domain's"; else ko "gc: removed a live domain's nodes"; fi
	xx gc
	expect_err "gc: nothing left" "nothing to remove"
	xx gc -q
	if [ "$RC" = 0 ] && [ ! -s "$T/err" ]; then ok "gc -q: quiet"; else ko "gc -q: status $RC, said $(cat "$T/err")"; fi
	xx gc -x
	expect_rc "gc: a bad option" 2

	# ---- create
	reset_store
	cat >"$T/c.cfg" <<'EOF'
name = "guest2"
xcuda = [ 'arena=8M', 'devid=1, sessions=2, upstream=gpu1:7700' ]
EOF
	xx create -q "$T/c.cfg"
	expect_rc "create" 0
	expect_val "/local/domain/2/device/xcuda/0/state" 1
	expect_val "/local/domain/0/backend/xcuda/2/1/max-sessions" 2
	expect_val "/local/domain/0/backend/xcuda/2/1/upstream" gpu1:7700
	expect_perms "/local/domain/0/backend/xcuda/2/1/upstream" "n0 r2"
	if [ -d "$T/xs/local/domain/0/backend/xcuda/2/0/upstream" ]; then
		ko "create: an upstream node for a device without upstream="
	else
		ok "create: no upstream node for a device without upstream="
	fi
	before "create: paused first" "xl create -p -q" " /local/domain/2/device/xcuda/0/backend="
	before "create: unpause last" " /local/domain/0/backend/xcuda/2/1/state=" "xl unpause 2"
	reset_store
	xx create "$T/c.cfg" -p 'name="guest3"'
	expect_rc "create -p with name=" 0
	expect_val "/local/domain/2/name" guest3
	if grep -q unpause "$T/log"; then ko "create -p: unpaused"; else ok "create -p: stays paused"; fi
	reset_store
	FAKE_FAIL_WRITE="/local/domain/0/backend/xcuda/2/1/frontend" xx create "$T/c.cfg"
	expect_rc "create: attach fails" 1
	expect_err "create: says so" "could not attach"
	if grep -q "xl destroy 2" "$T/log"; then ok "create: destroys the half-made domain"; else ko "create: left the domain"; fi
	gone "/local/domain/0/backend/xcuda/2"
	reset_store
	printf 'name="g"\nxcuda=["backend=nosuch"]\n' >"$T/nb.cfg"
	xx create "$T/nb.cfg"
	expect_rc "create: a missing backend" 1
	if grep -q "xl create" "$T/log"; then ko "create: made a domain for a missing backend"; else ok "create: checks backends first"; fi
	xx create -c "$T/c.cfg"
	expect_rc "create -c is refused" 2
	xx create "$T/c.cfg" "$T/good.cfg"
	expect_rc "create: two configs" 2
	FAKE_XL_FAIL=1 xx create "$T/c.cfg"
	expect_rc "create: xl create fails" 1
	xx create guest1-does-not-exist.cfg
	expect_rc "create: no such config" 2
	printf 'name="guest1"\n' >"$T/dup.cfg"
	xx create "$T/dup.cfg"
	expect_rc "create: the name is taken" 1
	xx bogus
	expect_rc "an unknown command" 2
}

if [ $# -gt 0 ]; then
	shells=
	for s; do
		shells="$shells$s:"
	done
else
	shells=
	for s in sh dash bash; do
		command -v "$s" >/dev/null && shells="$shells$s:"
	done
	command -v busybox >/dev/null && shells="${shells}busybox sh:"
fi
IFS_SAVE=$IFS
IFS=:
for SH in $shells; do
	IFS=$IFS_SAVE
	[ -n "$SH" ] && run_checks
	IFS=:
done
IFS=$IFS_SAVE
echo "$PASS passed, $FAILN failed"
[ "$FAILN" -eq 0 ]
