#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI's look at the benchmark: it builds, runs a tiny version natively,
# through xcuda and through xcuda's upstream link, and pairs the results;
# without a GPU every run must fail the same way.  tcp-raw, the upstream
# link's yardstick, needs no GPU: it must print its row.  A smoke run
# measures nothing.
#
#   tests/bench/smoke-test.sh BUILD_DIR
set -uo pipefail
B=${1:-build}
res=$B/results/bench-smoke
out=$(OUT=$res "$(dirname "$0")/run-bench.sh" "$B" --smoke 2>&1)
rc=$?
case $rc in
0) echo "PASS bench smoke: ran on the GPU every way and paired" ;;
3) echo "PASS bench smoke: no GPU, and every run failed alike: $out" ;;
*) echo "FAIL bench smoke (exit $rc)"; echo "$out" | sed 's/^/    /' ;;
esac
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || exit 1
[ "${BENCH_UPSTREAM:-1}" != 0 ] || exit 0

# The header and three rows: tcp_raw,67108864,<positive number>,GB/s,
# then tcp_rtt_spin and tcp_rtt_sleep,64,<positive number>,us.
if awk -F, '
NR == 1 { head = $0 == "metric,size_bytes,value,unit"; next }
$3 !~ /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ || $3 <= 0 { next }
NR == 2 && $1 == "tcp_raw" && $2 == 67108864 && $4 == "GB/s" { rows++ }
NR > 2 && $1 ~ /^tcp_rtt_(spin|sleep)$/ && $2 == 64 && $4 == "us" { rtt[$1]++ }
END { exit !(head && rows == 1 && rtt["tcp_rtt_spin"] == 1 &&
	     rtt["tcp_rtt_sleep"] == 1 && NR == 4) }' "$res/tcp-raw.csv"; then
	echo "PASS tcp-raw: $(tail -n +2 "$res/tcp-raw.csv" | tr '\n' ' ')"
else
	echo "FAIL tcp-raw: no well-formed tcp_raw row in $res/tcp-raw.csv:"
	sed 's/^/    /' "$res/tcp-raw.csv" "$res/tcp-raw.err"
	exit 1
fi
# On a GPU the pairs and the targets were written too.
if [ "$rc" -eq 0 ]; then
	for f in upstream-pairs.csv upstream-targets.csv upstream.txt; do
		[ -s "$res/$f" ] || { echo "FAIL bench smoke: no $f"; exit 1; }
	done
	echo "PASS bench smoke: upstream pairs written"
fi

# The A/B comparer (ab.py) on synthetic runs with known answers.
if command -v python3 >/dev/null; then
	if ab=$(python3 "$(dirname "$0")/ab.py" --self-test 2>&1); then
		echo "PASS ab.py: $(tail -n 1 <<<"$ab")"
	else
		echo "FAIL ab.py:"; sed 's/^/    /' <<<"$ab"
		exit 1
	fi
fi
