#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /init of the rig's DomU (busybox sh, PID 1): loads xcuda-front as a
# system would at boot, then serves Dom0's commands, one at a time.
#
# Dom0 writes data/xcuda-test/cmd = "<seq> <seconds> <shell command>";
# the agent runs the command (sh -c, under timeout), prints its stdout
# and stderr on the console as "XT:<seq>:O:<line>" and "XT:<seq>:E:<line>"
# followed by "XT:<seq>:RC:<status>", and then writes
# data/xcuda-test/rc = "<seq> <status> <stdout lines> <stderr lines>".
# Dom0 reads the console's log, and knows from the counts whether the
# console lost lines.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
X=data/xcuda-test

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /dev/shm
mount -t tmpfs tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
echo "RIG-DOMU: init, kernel $(uname -r), domain $(xenstore-read domid 2>/dev/null)"

if [ -e /lib/xcuda/xcuda-front.ko ]; then
	insmod /lib/xcuda/xcuda-front.ko
	rc=$?
else
	rc=missing
fi
echo "RIG-DOMU: insmod xcuda-front: $rc"
xenstore-write "$X/insmod" "$rc"
xenstore-write "$X/ready" 1

# emit SEQ KIND: each line of stdin, prefixed; a last line without a
# newline gets one.
emit() {
	while IFS= read -r line || [ -n "$line" ]; do
		printf 'XT:%s:%s:%s\n' "$1" "$2" "$line"
	done
}

last=
while :; do
	cmd=$(xenstore-read "$X/cmd" 2>/dev/null) || cmd=
	seq=${cmd%% *}
	if [ -n "$cmd" ] && [ "$seq" != "$last" ]; then
		last=$seq
		rest=${cmd#* }
		secs=${rest%% *}
		body=${rest#* }
		(cd / && exec timeout "$secs" sh -c "$body") </dev/null \
			>/tmp/xt.out 2>/tmp/xt.err
		rc=$?
		emit "$seq" O </tmp/xt.out
		emit "$seq" E </tmp/xt.err
		echo "XT:$seq:RC:$rc"
		xenstore-write "$X/rc" "$seq $rc $(awk 'END { print NR }' \
			/tmp/xt.out) $(awk 'END { print NR }' /tmp/xt.err)"
	fi
	sleep 0.2
done
