#!/usr/bin/env bash
# Runs the libFuzzer harnesses (make fuzzers builds them) one after the
# other, SECONDS each (default 12), from the seeds in tests/fuzz/corpus/
# and what earlier runs found in BUILD_DIR/fuzz/corpus/.  Each target is
# a PASS or a FAIL line (a FAIL keeps the input that broke it in
# BUILD_DIR/results/fuzz/); the last line is "N passed, N failed".  The
# CPU seconds of each run are added to BUILD_DIR/results/fuzz/cpu.tsv.
#
#   tests/fuzz/run-fuzz.sh BUILD_DIR [SECONDS [TARGET...]]
set -uo pipefail

B=${1:-build}
secs=${2:-12}
shift $(($# > 2 ? 2 : $#))
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
out=$B/results/fuzz
mkdir -p "$out"
pass=0 fail=0

if [ $# -eq 0 ]; then
	set -- $(for f in tests/fuzz/fuzz_*.c; do
		f=${f##*/fuzz_}; echo "${f%.c}"; done)
fi
for t in "$@"; do
	bin=$B/fuzz/fuzz_$t seeds=tests/fuzz/corpus/$t work=$B/fuzz/corpus/$t
	log=$out/$t.log
	if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
		echo "FAIL fuzz_$t: no $bin or no $seeds (make fuzzers)"
		fail=$((fail + 1))
		continue
	fi
	mkdir -p "$work"
	rm -f "$out/$t"-crash-* "$out/$t"-leak-* "$out/$t"-timeout-* \
		"$out/$t"-oom-*
	TIMEFORMAT='%U %S'
	# New inputs go to the first directory: the seeds stay as they are.
	{ time "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$out/$t-" \
		"$work" "$seeds" >"$log" 2>&1; } 2>"$out/$t.time"
	rc=$?
	cpu=$(awk '{printf "%.1f", $1 + $2}' "$out/$t.time")
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' \
		"$log" | tail -n 1)
	printf '%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$t" \
		"$cpu" "${runs:-0}" >>"$out/cpu.tsv"
	if [ "$rc" -eq 0 ]; then
		echo "PASS fuzz_$t: ${runs:-0} inputs in ${secs} s" \
			"(${cpu} s CPU), corpus $(ls "$work" | wc -l) + seeds"
		pass=$((pass + 1))
	else
		echo "FAIL fuzz_$t (exit $rc): $(ls "$out/$t"-* 2>/dev/null |
			grep -v '\.log$\|\.time$' | head -n 1)"
		grep -m 5 -E 'ERROR|check failed|SUMMARY' "$log" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
