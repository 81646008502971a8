#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Checks that docs/protocol.md documents exactly the commands of
# include/xcuda/calls.def: every XCUDA_CALL row has a heading
# "### XCUDA_OP_<NAME> (<number>)" with its number, and no heading names
# an op that the table lacks.
#
#   tests/unit/docs-test.sh [CALLS_DEF [PROTOCOL_MD]]
#
# Prints PASS NAME, or FAIL NAME: WHY for each problem found, then
# "N passed, N failed", and exits non-zero if the check failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
def=${1:-$root/include/xcuda/calls.def}
doc=${2:-$root/docs/protocol.md}
name=docs-protocol-covers-calls

report() {
	if [ "$1" -eq 0 ]; then
		echo "PASS $name"
		echo "1 passed, 0 failed"
		exit 0
	fi
	echo "0 passed, 1 failed"
	exit 1
}

for f in "$def" "$doc"; do
	if [ ! -r "$f" ]; then
		echo "FAIL $name: cannot read ${f#"$root"/}"
		report 1
	fi
done

# Everything is compared in one awk run: the table's rows (NAME NUMBER)
# first, then the document's headings.
LC_ALL=C awk -v name="$name" -v defname="${def#"$root"/}" \
	-v docname="${doc#"$root"/}" '
function fail(why) {
	print "FAIL " name ": " why
	nfail++
}
FNR == NR {
	line = $0
	sub(/\/\*.*/, "", line)		# a comment that starts on the line
	if (line !~ /^[ \t]*XCUDA_CALL[ \t]*\(/)
		next
	sub(/^[ \t]*XCUDA_CALL[ \t]*\([ \t]*/, "", line)
	n = split(line, f, ",")
	op = f[1]; num = f[2]
	gsub(/[ \t]/, "", op); gsub(/[ \t]/, "", num)
	if (n < 6 || op !~ /^[A-Z0-9_]+$/ || num !~ /^[0-9]+$/) {
		fail(defname ":" FNR ": cannot read the row: " $0)
		next
	}
	if (op in want)
		fail(defname ": " op " is listed twice")
	want[op] = num + 0
	order[++nrows] = op
	next
}
# Any heading that names an op must have the exact form.
/^#+[ \t]*XCUDA_OP_/ {
	if ($0 !~ /^### XCUDA_OP_[A-Z0-9_]+ \([0-9]+\)$/) {
		fail(docname ":" FNR ": heading is not \"### XCUDA_OP_<NAME> (<number>)\": " $0)
		next
	}
	op = $2; sub(/^XCUDA_OP_/, "", op)
	num = $3; gsub(/[()]/, "", num)
	if (op in seen) {
		fail(docname ":" FNR ": XCUDA_OP_" op " has a second heading")
		next
	}
	seen[op] = num + 0
	if (!(op in want))
		fail(docname ":" FNR ": XCUDA_OP_" op " (" num ") is not in " defname)
}
END {
	if (!nrows)
		fail("no XCUDA_CALL rows found in " defname)
	for (i = 1; i <= nrows; i++) {
		op = order[i]
		if (!(op in seen))
			fail(docname ": no heading \"### XCUDA_OP_" op " (" want[op] ")\"")
		else if (seen[op] != want[op])
			fail(docname ": XCUDA_OP_" op " is documented as (" seen[op] "), but its number is " want[op])
	}
	exit nfail ? 1 : 0
}' "$def" "$doc"
report $?
