#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Draws the benchmark's charts from the paired CSV that run-bench.sh
# writes (on any machine with gnuplot: apt-get install gnuplot-nox):
#
#   tests/bench/plot.sh BENCH_CSV [OUT_DIR]
#
# bandwidth-h2d.png, bandwidth-d2h.png: GB/s against copy size, pinned
# and pageable, native and xcuda on one chart each; latency.png: the
# per-call rows, native beside xcuda.
set -euo pipefail

csv=${1:?usage: $0 BENCH_CSV [OUT_DIR]}
out=${2:-$(dirname "$csv")}
command -v gnuplot >/dev/null || { echo "plot: needs gnuplot" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One data file per series: size native xcuda.
for m in pinned_h2d pinned_d2h pageable_h2d pageable_d2h; do
	awk -F, -v m="$m" '$1 == m { print $2, $4, $5 }' "$csv" >"$tmp/$m.dat"
done
awk -F, 'NR > 1 && $3 == "us" { printf "%s %s %s\n", $1, $4, $5 }' \
	"$csv" >"$tmp/latency.dat"

for dir in h2d d2h; do
	up=$(tr a-z A-Z <<<"$dir")
	gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output "$out/bandwidth-$dir.png"
set title "$up bandwidth: native CUDA vs xcuda (same GPU, same run)"
set logscale x 2
set xtics ("4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304, "16M" 16777216, "64M" 67108864, "256M" 268435456)
set xlabel "copy size (bytes)"
set ylabel "GB/s (median)"
set key top left
set grid
plot "$tmp/pinned_$dir.dat" using 1:2 with linespoints lw 2 title "pinned, native", \
     "$tmp/pinned_$dir.dat" using 1:3 with linespoints lw 2 dt 2 title "pinned, xcuda", \
     "$tmp/pageable_$dir.dat" using 1:2 with linespoints lw 2 title "pageable, native", \
     "$tmp/pageable_$dir.dat" using 1:3 with linespoints lw 2 dt 2 title "pageable, xcuda"
GP
done

gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output "$out/latency.png"
set title "Per-call cost: native CUDA vs xcuda (same GPU, same run)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "microseconds (median, log scale)"
set xtics rotate by -30
set grid ytics
plot "$tmp/latency.dat" using 2:xtic(1) title "native", \
     "" using 3 title "xcuda"
GP
echo "plot: $out/bandwidth-h2d.png $out/bandwidth-d2h.png $out/latency.png"
