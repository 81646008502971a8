#!/usr/bin/env bash
# Runs the kernel's checkpatch.pl --strict over the kernel modules.
#
#   tools/checkpatch.sh BUILD_DIR [FILE...]
#
# checkpatch.pl is not in the linux-headers package: it is taken from
# Debian's linux-source package (the same kernel version), into
# BUILD_DIR/checkpatch, once.  Prints one PASS/FAIL line per file and
# "N passed, N failed".
#
# One kind of report is not ours to fix: "Avoid CamelCase" for the
# kernel's own enumerators (XenbusStateConnected and its siblings, which
# every xenbus driver must name; checkpatch learns macros and types from
# the headers, not enumerators).  Such a report is dropped only when the
# name is an enumerator in the kernel's include/; any other report fails.
set -uo pipefail

B=${1:-build}
shift || true
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
dir=$(mkdir -p "$B" && cd "$B" && pwd)/checkpatch

# A tree made of the source's include/ and scripts/ and the top-level
# entries by which checkpatch recognises a kernel tree.
fetch() {
	local tarball src e
	[ -r "$dir/linux/scripts/checkpatch.pl" ] && return 0
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$tarball" ]; then
		echo "checkpatch: no /usr/src/linux-source-*.tar.xz" \
			"(apt-get install linux-source)" >&2
		return 1
	fi
	src=$(basename "$tarball" .tar.xz)
	rm -rf "$dir"
	mkdir -p "$dir/linux"
	tar -xJf "$tarball" -C "$dir/linux" --strip-components=1 \
		"$src/scripts" "$src/include" "$src/COPYING" "$src/CREDITS" \
		"$src/Kbuild" "$src/MAINTAINERS" "$src/Makefile" "$src/README" ||
		return 1
	for e in Documentation arch drivers fs init ipc kernel lib; do
		mkdir -p "$dir/linux/$e"
	done
}

# Reads checkpatch's terse reports; prints those that are ours.
ours() {
	local line name
	while IFS= read -r line; do
		name=$(sed -n 's/.*CHECK:CAMELCASE: Avoid CamelCase: <\([A-Za-z0-9_]*\)>.*/\1/p' <<<"$line")
		if [ -n "$name" ] && grep -rqE "^[[:space:]]*$name[[:space:]]*(=|,)" \
			"$dir/linux/include"; then
			continue
		fi
		echo "$line"
	done
}

fetch || { echo "0 passed, 1 failed"; exit 1; }
if [ $# -eq 0 ]; then
	# Our sources only, not what kbuild generates beside them.
	mapfile -t files < <(ls guest-kmod/*.[ch] dom0-kmod/*.[ch] \
		include/xcuda/xen_doorbell.h tests/xen/hostile/*.[ch] \
		2>/dev/null | grep -v '\.mod\.c$')
else
	files=("$@")
fi
pass=0 fail=0
for f in "${files[@]}"; do
	case $f in /*) path=$f ;; *) path=$top/$f ;; esac
	if [ ! -r "$path" ]; then
		echo "FAIL checkpatch --strict $f: cannot read it"
		fail=$((fail + 1))
		continue
	fi
	# From the tree, not from git: GIT_DIR would make it read our
	# repository's include/; it caches what it learns in its cwd.
	out=$(cd "$dir/linux" && GIT_DIR=/nonexistent perl \
		scripts/checkpatch.pl --strict --root=. --show-types --terse \
		--no-summary -f "$path" 2>&1)
	bad=$(grep -E ': (ERROR|WARNING|CHECK):' <<<"$out" | ours)
	if [ -z "$bad" ]; then
		echo "PASS checkpatch --strict $f"
		pass=$((pass + 1))
	else
		echo "FAIL checkpatch --strict $f"
		sed 's/^/    /' <<<"$bad"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
