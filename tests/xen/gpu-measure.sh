#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gpu-rig.sh's report: every path's round trips and benchmark rows side
# by side, and what the transports counted per request.
#
#   tests/xen/gpu-measure.sh RESULTS_DIR
#
# Reads RESULTS_DIR/ping-{host,upstream}.txt and bench/{native,xcuda,
# upstream}.csv (this host), and the rig's RIG-PING, RIG-BENCH and
# RIG-COUNTERS lines in serial.clean.  The rig's timings come from an
# emulated machine (TCG): compare them with each other, not with the
# host's.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 RESULTS_DIR" >&2; exit 2; }
R=$1
S=$R/serial.clean
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# the rig's lines, by origin
for o in domU dom0; do
	sed -n "s/^RIG-PING: $o: //p" "$S" >"$t/ping-$o.txt" 2>/dev/null || :
	sed -n "s/^RIG-BENCH: $o: //p" "$S" >"$t/$o.csv" 2>/dev/null || :
done
[ -f "$R/ping-host.txt" ] && cp "$R/ping-host.txt" "$t/ping-hlocal.txt"
[ -f "$R/ping-upstream.txt" ] && cp "$R/ping-upstream.txt" "$t/ping-hup.txt"
for f in native xcuda upstream; do
	[ -f "$R/bench/$f.csv" ] && cp "$R/bench/$f.csv" "$t/b-$f.csv"
done

paths=(hlocal hup dom0 domU)
declare -A what=(
	[hlocal]="host: local"
	[hup]="host: local, relay, TCP upstream on the loopback"
	[dom0]="rig Dom0: local, relay, TCP over QEMU's user network"
	[domU]="rig DomU: xen ring, relay, TCP over QEMU's user network"
)

echo "== round trips: xcudactl ping 2000 (64 bytes each way)"
printf '%-58s %10s %10s  %s\n' path "median us" "p99 us" "this side's counters"
for p in "${paths[@]}"; do
	f=$t/ping-$p.txt
	[ -s "$f" ] || { printf '%-58s %10s\n' "${what[$p]}" "no run"; continue; }
	awk -v name="${what[$p]}" '
	/^ping ok/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "median") med = $(i + 1)
			if ($i == "p99") p99 = $(i + 1)
		}
	}
	/^ping stats/ { sub(/^ping stats \(this process.s side only\): /, ""); st = $0 }
	/FAILED/ { med = "FAILED" }
	END { printf "%-58s %10s %10s  %s\n", name, med, p99, st }' "$f"
done

echo
echo "== benchmark ($(sed -n 's/^GPU_BENCH="\(.*\)"$/\1/p' "$(dirname "$0")/scenarios.sh")): each path, and / native here"
# columns: native, then each path with its ratio to native
awk -F, -v t="$t" '
function load(file, col,    line, n, k, a) {
	while ((getline line < file) > 0) {
		n = split(line, a, ",")
		if (n < 4 || a[1] == "metric") continue
		k = a[1] "," a[2]
		v[k, col] = a[3]; u[k] = a[4]
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	}
	close(file)
}
BEGIN {
	load(t "/b-native.csv", "native"); load(t "/b-xcuda.csv", "hlocal")
	load(t "/b-upstream.csv", "hup"); load(t "/dom0.csv", "dom0")
	load(t "/domU.csv", "domU")
	split("hlocal hup dom0 domU", cols, " ")
	printf "%-18s %9s %5s %10s", "metric", "size", "unit", "native"
	for (c = 1; c <= 4; c++) printf " %16s", cols[c]
	printf "\n"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, kk, ",")
		if (kk[1] == "cpu") continue
		n = v[k, "native"]
		printf "%-18s %9s %5s %10s", kk[1], kk[2], u[k], n == "" ? "-" : n
		for (c = 1; c <= 4; c++) {
			x = v[k, cols[c]]
			if (x == "") { printf " %16s", "-"; continue }
			if (n != "" && n + 0 > 0)
				printf " %9s (%4.2f)", x, x / n
			else
				printf " %16s", x
		}
		printf "\n"
	}
}'
echo "(hlocal: local here; hup: the TCP upstream here; dom0, domU: in the rig)"

echo
echo "== what the relay in the rig's Dom0 counted, per session"
sed -n 's/^RIG-COUNTERS: //p' "$S" | sed 's/xcudad\[[0-9]*\]: info: //'
echo
echo "== per request, from those counters (ring: the relay's end; link: its TCP socket)"
sed -n 's/^RIG-COUNTERS: //p' "$S" | awk '
{
	who = $1; sub(/:$/, "", who)
	if ($0 ~ /ring: /) {
		match($0, /ring: [0-9]+ requests taken/); split(substr($0, RSTART, RLENGTH), a, " "); req[who] += a[2]
		match($0, /[0-9]+ bells rung/); split(substr($0, RSTART, RLENGTH), b, " "); bells[who] += b[1]
		match($0, /[0-9]+ sleeps/); split(substr($0, RSTART, RLENGTH), c, " "); sleeps[who] += c[1]
		if (!(who in seen)) { seen[who] = 1; order[++n] = who }
	}
	if ($0 ~ /link: /) {
		match($0, /in over [0-9]+ syscalls/); split(substr($0, RSTART, RLENGTH), d, " "); lin[who] += d[3]
		match($0, /out over [0-9]+ syscalls/); split(substr($0, RSTART, RLENGTH), e, " "); lout[who] += e[3]
	}
}
END {
	printf "%-12s %10s %12s %12s %16s\n", "session", "requests", "bells/req", "sleeps/req", "link syscalls/req"
	for (i = 1; i <= n; i++) {
		w = order[i]; r = req[w]
		if (!r) continue
		printf "%-12s %10d %12.3f %12.3f %16.3f\n", w, r, bells[w] / r, sleeps[w] / r, (lin[w] + lout[w]) / r
	}
}'
echo
echo "== this host's xcudad (the GPU server): its sessions of 1000 requests or more, in order"
grep -h 'counters:' "$R/xcudad-host.log" 2>/dev/null | sed 's/^xcudad\[[0-9]*\]: info: //' |
	awk '{ for (i = 1; i < NF; i++) if (($(i + 1) == "requests" || $(i + 1) == "syscalls") && $i + 0 >= 1000) { print; next } }'

