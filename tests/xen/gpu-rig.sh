#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Xen rig on a GPU host: a DomU's CUDA programs cross a real grant
# ring under QEMU and end on this host's GPU.
#
#   tests/xen/gpu-rig.sh BUILD_DIR PACK
#
# BUILD_DIR is xcuda built on this host (make all); PACK is what
# `tests/xen/run.sh BUILD_DIR --pack PACK` made on a Debian 12 machine
# with the rig's packages (make rig-pack): QEMU and the rig's images,
# since a GPU host has neither.  In order:
#
#   1. the CUDA programs natively and through xcuda here (run-compare.sh);
#      the native outputs are the DomU's references;
#   2. xcudactl ping and the benchmark here: natively, over `local` and
#      over the TCP upstream on the loopback (run-bench.sh), with the
#      rig's options (GPU_BENCH in scenarios.sh);
#   3. this host's xcudad listens on 127.0.0.1:7701 with the pack's key,
#      and a web server on 127.0.0.1:7702 serves the references;
#   4. QEMU boots the rig (TCG: nested KVM is not assumed).  Dom0 reaches
#      the host's loopback at 10.0.2.2 through QEMU's user network; its
#      xcudad relays every session there.  The scenarios (SCENARIOS_GPU):
#      connect, cuda-compare (every program in the DomU against this
#      host's native output), measure (ping and the benchmark in the
#      DomU and in Dom0).
#
# Results go to $OUT if set, else BUILD_DIR/results/xen-gpu: compare/,
# bench/, serial.log, measure.txt (every path side by side, with the
# transports' counters).  Prints "PASS/FAIL <scenario>" and last
# "N passed, N failed"; exits 0 only if all passed.  Without a GPU it
# says so and exits 0 (SKIP).  Environment: XCUDA_RIG_TIMEOUT (seconds
# for the boot, default 1500).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR PACK" >&2; exit 2; }
B=$(cd "$1" && pwd) || exit 2
PACK=$(readlink -f "$2")
[ -f "$PACK" ] || { echo "$0: no pack at $2 (make rig-pack on a Debian 12 machine)" >&2; exit 2; }
TIMEOUT=${XCUDA_RIG_TIMEOUT:-1500}
# No JIT cache, for the native runs and the daemons alike: a PTX load's
# information log is the compiler's when it compiles, and empty when the
# cache of the user who runs it (root natively, the worker's elsewhere)
# already holds the code, so driver_library's output would depend on
# which runs came before.
export CUDA_CACHE_DISABLE=1
RES=${OUT:-$B/results/xen-gpu}
UP_PORT=7701
WEB_PORT=7702
mkdir -p "$RES"

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no GPU (nvidia-smi finds none): the GPU rig needs one"
	exit 0
fi
for f in bin/xcudad bin/xcudactl lib/libcudart.so.13; do
	[ -e "$B/$f" ] || { echo "$0: $B/$f is not built (make all)" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "$0: python3 serves the references; there is none" >&2; exit 2; }

w=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$w"
}
trap cleanup EXIT
xz -dc "$PACK" | tar -x -C "$w" || { echo "$0: cannot unpack $PACK" >&2; exit 2; }
chmod 600 "$w/gpu.key"
bench_opts=$(sed -n 's/^GPU_BENCH="\(.*\)"$/\1/p' "$HERE/scenarios.sh")
read -r -a bench_args <<<"$bench_opts"

echo "== 1. the CUDA programs natively and through xcuda here"
OUT=$RES/compare "$TOP/tests/cuda/run-compare.sh" --gpu "$B" >"$RES/compare.txt" 2>&1
grep -E '^(FAIL|SKIP)' "$RES/compare.txt"
echo "host: $(tail -n 1 "$RES/compare.txt")"
mkdir -p "$w/www"
(cd "$RES/compare" && tar -cf "$w/www/refs.tar" -- *.native.out) ||
	{ echo "FAIL references: no native outputs"; echo "0 passed, 1 failed"; exit 1; }

echo "== 2. ping and the benchmark here ($bench_opts)"
env -u LD_LIBRARY_PATH "$B/bin/xcudad" -v --no-xen --socket "$w/host.sock" \
	--listen "127.0.0.1:$UP_PORT" --key "$w/gpu.key" >"$RES/xcudad-host.log" 2>&1 &
pids+=($!)
env -u LD_LIBRARY_PATH "$B/bin/xcudad" -v --no-xen --socket "$w/relay.sock" \
	--upstream "127.0.0.1:$UP_PORT" --key "$w/gpu.key" >"$RES/xcudad-relay.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$w/host.sock" ] && [ -S "$w/relay.sock" ] && break; sleep 0.05; done
for p in host:host.sock upstream:relay.sock; do
	XCUDA_SOCKET=$w/${p#*:} LD_LIBRARY_PATH=$B/lib "$B/bin/xcudactl" ping 2000 \
		>"$RES/ping-${p%%:*}.txt" 2>&1
	sed "s/^/host ${p%%:*}: /" "$RES/ping-${p%%:*}.txt"
done
OUT=$RES/bench BENCH_TORCH=0 "$TOP/tests/bench/run-bench.sh" "$B" "${bench_args[@]}" \
	>"$RES/bench.txt" 2>&1 || echo "host benchmark: status $? (see $RES/bench.txt)"

echo "== 3. the references at 127.0.0.1:$WEB_PORT, this host's xcudad at 127.0.0.1:$UP_PORT"
python3 -m http.server "$WEB_PORT" --bind 127.0.0.1 --directory "$w/www" \
	>"$RES/web.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $WEB_PORT), 1)" 2>/dev/null && break
	sleep 0.1
done

echo "== 4. the rig"
# shellcheck source=tests/xen/rig-lib.sh
. "$HERE/rig-lib.sh"
# The programs pin as they do on a GPU: graph_api keeps 288 MiB of
# pageable graph copies bounced through its arena (768 MiB, cc_env in
# scenarios.sh), granted from Dom0's pages.
RIG_XEN_CMDLINE=${RIG_XEN_CMDLINE/dom0_mem=1G,max:1G/dom0_mem=2G,max:2G}
RIG_XEN_CMDLINE=${RIG_XEN_CMDLINE/gnttab_max_frames=256/gnttab_max_frames=640}
RIG_QEMU_MB=3584
rig_qemu_args "$w" net
# QEMU alone gets the pack's libraries: they are Debian's, not this host's.
cat >"$w/qemu" <<QEOF
#!/bin/sh
QEMU_MODULE_DIR=$w/mod LD_LIBRARY_PATH=$w/lib exec $w/qemu-system-x86_64 -L $w/fw "\$@"
QEOF
chmod +x "$w/qemu"
rig_boot "$RES/serial.log" "$TIMEOUT" "$w/qemu" "${RIG_QEMU_ARGS[@]}"

"$HERE/gpu-measure.sh" "$RES" | tee "$RES/measure.txt"
read -r -a expected < <(sed -n 's/^SCENARIOS_GPU="\(.*\)"$/\1/p' "$HERE/scenarios.sh")
rig_verdict "$RES/serial.clean" "$TIMEOUT" 0 "${expected[@]}"
