#!/usr/bin/env bash
# Warm-cache read benchmark of the FUSE daemon, in one run: fio 4 KiB random reads (1 and 4
# jobs) and 1 MiB sequential reads on
#   flashdir        the daemon under test (build/daemon/flashdir)
#   passthrough_hp  libfuse's fast passthrough example (bench/fuse/build_passthrough_hp.sh)
#   backing         the backing directory itself (no FUSE)
# All reads use direct=1 (O_DIRECT): every read reaches the FUSE daemon instead of the kernel
# page cache of the mount (bench/README.md explains why). The backing directory lives on tmpfs
# (/dev/shm), where O_DIRECT is served from memory: passthrough_hp passes O_DIRECT on to the
# backing file, and on a disk its reads would measure the disk, not FUSE. Before measuring,
# each target reads the whole file once (warm: with the engine, the flashdir cache has admitted
# it). Prints a table and writes it to bench/fuse/results.md.
#
#   bench/fuse/run.sh                 env: FLASHDIR_BENCH_SIZE (256M), FLASHDIR_BENCH_SECONDS (10),
#                                          FLASHDIR (the binary), FLASHDIR_BENCH_MODE (writethrough),
#                                          FLASHDIR_BENCH_DIR (/dev/shm: where backing and cache live)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
flashdir="${FLASHDIR:-$root/build/daemon/flashdir}"
size="${FLASHDIR_BENCH_SIZE:-256M}"
seconds="${FLASHDIR_BENCH_SECONDS:-10}"
mode="${FLASHDIR_BENCH_MODE:-writethrough}"
[ -x "$flashdir" ] || { echo "run.sh: build flashdir first (ninja -C build daemon/flashdir)" >&2; exit 1; }
command -v fio >/dev/null || { echo "run.sh: fio is missing" >&2; exit 1; }
passthrough_hp="$("$root/bench/fuse/build_passthrough_hp.sh")"

work="$(mktemp -d "${FLASHDIR_BENCH_DIR:-/dev/shm}/flashdir-bench-XXXXXX")"
cleanup() {
  for m in "$work/flashdir" "$work/passthrough_hp"; do
    mountpoint -q "$m" 2>/dev/null && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
  local pid
  pid="$(cat "$work/cache/daemon.lock" 2>/dev/null || true)"
  [ -n "$pid" ] && for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/backing" "$work/flashdir" "$work/passthrough_hp"
fio --name=layout --directory="$work/backing" --filename=data --size="$size" --rw=write --bs=1M \
  --ioengine=psync --output=/dev/null

# seq_cutoff_read=0: the warm-up is one sequential stream over the whole file, which the
# default cutoff (16 MiB) would stop admitting; the benchmark measures a warm cache.
"$flashdir" "$work/backing" "$work/flashdir" -o "cache=$work/cache,size=1G,mode=$mode,seq_cutoff_read=0" >/dev/null 2>&1
"$passthrough_hp" "$work/backing" "$work/passthrough_hp"

# fio_run DIR RW BS JOBS -> "IOPS MiB/s"
fio_run() {
  local dir="$1" rw="$2" bs="$3" jobs="$4"
  fio --name=bench --directory="$dir" --filename=data --size="$size" --rw="$rw" --bs="$bs" --numjobs="$jobs" \
    --direct=1 --ioengine=psync --time_based --runtime="$seconds" --ramp_time=1 --group_reporting \
    --randrepeat=0 --output-format=json | python3 -c '
import json, sys
job = json.load(sys.stdin)["jobs"][0]["read"]
print("%.0f %.1f" % (job["iops"], job["bw"] / 1024))'
}

declare -A result
targets=(flashdir passthrough_hp backing)
workloads=("randread 4k 1" "randread 4k 4" "read 1M 1")
for target in "${targets[@]}"; do
  dir="$work/$target"
  # Warm-up: read everything once.
  fio --name=warm --directory="$dir" --filename=data --size="$size" --rw=read --bs=1M --direct=1 \
    --ioengine=psync --output=/dev/null
  for workload in "${workloads[@]}"; do
    read -r rw bs jobs <<<"$workload"
    result["$target $workload"]="$(fio_run "$dir" "$rw" "$bs" "$jobs")"
  done
done

{
  echo "| workload (direct=1, warm) | flashdir | passthrough_hp | backing | flashdir / passthrough_hp | flashdir / backing |"
  echo "|---|---|---|---|---|---|"
  for workload in "${workloads[@]}"; do
    read -r rw bs jobs <<<"$workload"
    read -r f_iops f_mib <<<"${result[flashdir $workload]}"
    read -r p_iops p_mib <<<"${result[passthrough_hp $workload]}"
    read -r b_iops b_mib <<<"${result[backing $workload]}"
    python3 - "$rw $bs x$jobs" "$f_iops" "$f_mib" "$p_iops" "$p_mib" "$b_iops" "$b_mib" <<'PY'
import sys
name, f_iops, f_mib, p_iops, p_mib, b_iops, b_mib = sys.argv[1:]
f, p, b = float(f_mib), float(p_mib), float(b_mib)
fmt = lambda iops, mib: f"{float(iops):,.0f} IOPS, {mib} MiB/s"
print(f"| {name} | {fmt(f_iops, f_mib)} | {fmt(p_iops, p_mib)} | {fmt(b_iops, b_mib)} | {f / p:.2f} | {f / b:.2f} |")
PY
  done
  echo
  python3 - "$work/flashdir/.flashdir/stats.json" <<'PY'
import json, sys
cache = json.load(open(sys.argv[1]))["cache"]
print(f"flashdir cache: hit ratio {float(cache['hit_ratio']):.3f} over the whole run, {cache['cached_pages']} pages cached")
PY
  echo "file $size, ${seconds}s per point, mode=$mode, $(nproc) CPUs, kernel $(uname -r), $(date -u +%Y-%m-%d)"
} | tee "$root/bench/fuse/results.md"
