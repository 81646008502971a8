#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NVIDIA's cuda-samples, natively and through xcuda.
#
#   tests/samples/samples.sh build SAMPLES OUT [DIR...]
#       builds every runtime-only program of a cuda-samples checkout
#       (SAMPLES: its top directory) with `nvcc -arch=sm_90 -cudart shared`
#       into OUT/bin, logs into OUT/build; OUT/built lists what built.
#       With DIRs (as samples.txt names them), only those, added.
#   tests/samples/samples.sh compare OUT BUILD
#       runs each built program natively, then through xcuda (BUILD/lib,
#       BUILD/bin/xcudad; as a DomU sees the host where as-guest.sh can),
#       each in a copy of its sample directory (for its data files), and
#       compares stdout and exit status, timings aside.  A program that
#       fails natively is not counted.  Prints PASS/FAIL/NATIVE-FAIL per
#       program, then "N passed, N failed, N native-failed".
#
# Which samples take part, and why the others do not, is in
# tests/samples/samples.txt.  Nothing of cuda-samples is kept here.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
LIST=$HERE/samples.txt
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
TIMEOUT=${XCUDA_TEST_TIMEOUT:-300}

usage() {
	sed -n '4,20p' "$0" >&2
	exit 2
}

# The samples that take part: "DIR FLAGS..." lines of samples.txt.
included() {
	awk '!/^#/ && NF && $2 == "run" { d = $1; $1 = $2 = ""; print d, $0 }' \
		"$LIST"
}

build_one() {
	local src=$1 out=$2 dir=$3 flags=() fatbins=() name srcs f k
	name=$(basename "$dir")
	# The sources at the top or under src/, and %FILE flags: a file of
	# the checkout's (shared helpers of Common/).
	mapfile -t srcs < <(find "$src/Samples/$dir" "$src/Samples/$dir/src" \
		-maxdepth 1 \( -name '*.cu' -o -name '*.cpp' -o -name '*.c' \) \
		2>/dev/null | sort)
	for f in $4; do
		case $f in
		@*) ;;
		%*) srcs+=("$src/${f#%}") ;;
		# &KERNEL.cu=NAME.fatbin: a module the program loads itself
		# (the driver API), built beside its data, not linked in.
		'&'*) fatbins+=("${f#&}") ;;
		# ^KERNEL.cu: source NVRTC compiles at run time, not nvcc.
		'^'*) mapfile -t srcs < <(printf '%s\n' "${srcs[@]}" |
			grep -vxF "$src/Samples/$dir/${f#^}") ;;
		*) flags+=("$f") ;;
		esac
	done
	for f in ${fatbins[@]+"${fatbins[@]}"}; do
		k=$src/Samples/$dir/${f%%=*}
		mapfile -t srcs < <(printf '%s\n' "${srcs[@]}" | grep -vxF "$k")
		mkdir -p "$out/data/$dir"
		if ! "$NVCC" -arch=sm_90 -fatbin -I"$src/Common" \
			-o "$out/data/$dir/${f#*=}" "$k" \
			>"$out/build/$name.fatbin.log" 2>&1; then
			echo "BUILD-FAIL $dir (see $out/build/$name.fatbin.log)"
			return
		fi
	done
	if "$NVCC" -arch=sm_90 -cudart shared -O2 -std=c++17 \
		-I"$src/Common" -I"$src/Samples/$dir" \
		-I"$src/Samples/$dir/inc" ${flags[@]+"${flags[@]}"} \
		-o "$out/bin/$name" "${srcs[@]}" \
		>"$out/build/$name.log" 2>&1; then
		echo "$dir" >>"$out/built"
		echo "built $dir"
	else
		echo "BUILD-FAIL $dir (see $out/build/$name.log)"
	fi
}

cmd_build() {
	local src=$1 out=$2 dir flags only
	shift 2
	only=" $* "
	[ -d "$src/Samples" ] || { echo "$0: $src: no Samples/" >&2; exit 2; }
	mkdir -p "$out/bin" "$out/build"
	[ $# -gt 0 ] || : >"$out/built"
	while read -r dir flags; do
		[ "$only" = "  " ] || [[ $only == *" $dir "* ]] || continue
		build_one "$src" "$out" "$dir" "$flags" &
		while [ "$(jobs -r | wc -l)" -ge "$(nproc)" ]; do
			wait -n
		done
	done < <(included)
	wait
	sort -u -o "$out/built" "$out/built"
	# What the programs read at run time: everything but the sources.
	while read -r dir flags; do
		[ -d "$src/Samples/$dir" ] || continue
		mkdir -p "$out/data/$dir"
		(cd "$src/Samples" && find "$dir" -type f ! -name '*.cu' \
			! -name '*.cpp' ! -name '*.c' ! -name '*.h' \
			! -name '*.cuh' ! -name '*.hpp' ! -name '*.md' \
			! -name CMakeLists.txt -print0 |
			tar --null -T - -cf - | tar -xf - -C "$out/data")
		# The sources NVRTC compiles at run time are data too.
		for f in $flags; do
			case $f in
			'^'*) cp "$src/Samples/$dir/${f#^}" "$out/data/$dir/" ;;
			esac
		done
	done < <(included)
	echo "$(wc -l <"$out/built") built"
}

# Timings, rates and clocks differ from run to run: numbers on lines that
# speak of them are masked, and on lines matching the sample's @mask=ERE.
# @sort compares the lines in any order (output of concurrent kernels);
# @status compares the exit status alone (the output is all timings).
normalize() {
	local opts=$1 mask='^$' o
	for o in $opts; do
		case $o in
		@mask=*) mask=${o#@mask=} ;;
		@status) grep '^exit status:'; return ;;
		esac
	done
	sed -E '/[Tt]ime|sec|[^a-z]ms\b|[GM]B\/s|[Tt]hroughput|[Bb]andwidth|FLOP|[Ff]lop|[Pp]erformance|[Ee]lapsed|[Ss]peed|[Cc]lock|usec|Ops\/s|[Ll]atency|Mpix|Mtex|TOPS/ s/[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/#/g' |
		sed -E "/$mask/ s/[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/#/g" |
		if [[ " $opts " == *" @sort "* ]]; then sort; else cat; fi
}

# The @options of a sample, from samples.txt.
options() {
	included | awk -v d="$1" '$1 == d { for (i = 2; i <= NF; i++)
		if ($i ~ /^@/) printf "%s ", $i }'
}

cmd_compare() {
	local out=$1 build=$2 sock tmp log guest=() pass=0 fail=0 nfail=0
	local dir name rc opts
	build=$(cd "$build" && pwd) && out=$(cd "$out" && pwd) || exit 2
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/xcuda-samples.XXXXXX") || exit 2
	sock=$tmp/xcudad.sock
	log=$out/xcudad.log
	env -u LD_LIBRARY_PATH "$build/bin/xcudad" --socket "$sock" \
		>"$log" 2>&1 </dev/null &
	local daemon=$!
	# Expanded now: the trap runs after this function's locals are gone.
	trap "kill $daemon 2>/dev/null; rm -rf '$tmp'" EXIT
	for _ in $(seq 300); do [ -e "$sock" ] && break; sleep 0.1; done
	[ -e "$sock" ] || { echo "$0: xcudad did not start" >&2; exit 2; }
	if "$HERE/../cuda/as-guest.sh" --check; then
		guest=("$HERE/../cuda/as-guest.sh")
	fi
	mkdir -p "$out/results"
	while read -r dir; do
		name=$(basename "$dir")
		rm -rf "$tmp/run" && cp -r "$out/data/$dir" "$tmp/run"
		(cd "$tmp/run" && env -u LD_LIBRARY_PATH timeout "$TIMEOUT" \
			"$out/bin/$name") >"$out/results/$name.native" \
			2>"$out/results/$name.native.err" </dev/null
		rc=$?
		echo "exit status: $rc" >>"$out/results/$name.native"
		if [ $rc != 0 ]; then
			echo "NATIVE-FAIL $dir (status $rc)"
			nfail=$((nfail + 1))
			continue
		fi
		rm -rf "$tmp/run" && cp -r "$out/data/$dir" "$tmp/run"
		(cd "$tmp/run" && env LD_LIBRARY_PATH="$build/lib" \
			XCUDA_SOCKET="$sock" ${guest[@]+"${guest[@]}"} \
			timeout "$TIMEOUT" "$out/bin/$name") \
			>"$out/results/$name.xcuda" \
			2>"$out/results/$name.xcuda.err" </dev/null
		echo "exit status: $?" >>"$out/results/$name.xcuda"
		opts=$(options "$dir")
		if diff <(normalize "$opts" <"$out/results/$name.native") \
			<(normalize "$opts" <"$out/results/$name.xcuda") \
			>"$out/results/$name.diff"; then
			echo "PASS $dir"
			pass=$((pass + 1))
			rm -f "$out/results/$name.diff"
		else
			echo "FAIL $dir"
			head -n 20 "$out/results/$name.diff"
			fail=$((fail + 1))
		fi
	done <"$out/built"
	echo "$pass passed, $fail failed, $nfail native-failed"
	[ $fail = 0 ]
}

case "${1:-}" in
build) [ $# -ge 3 ] || usage; shift; cmd_build "$@" ;;
compare) [ $# = 3 ] || usage; cmd_compare "$2" "$3" ;;
*) usage ;;
esac
