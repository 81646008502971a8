#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI's look at the benchmark: it builds, runs a tiny version natively and
# through xcuda, and pairs the results; without a GPU both runs must
# fail the same way.  A smoke run measures nothing.
#
#   tests/bench/smoke-test.sh BUILD_DIR
set -uo pipefail
B=${1:-build}
out=$(OUT=$B/results/bench-smoke "$(dirname "$0")/run-bench.sh" "$B" --smoke 2>&1)
rc=$?
case $rc in
0) echo "PASS bench smoke: ran on the GPU both ways and paired" ;;
3) echo "PASS bench smoke: no GPU, and both runs failed alike: $out" ;;
*) echo "FAIL bench smoke (exit $rc)"; echo "$out" | sed 's/^/    /' ;;
esac
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
