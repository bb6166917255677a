#!/usr/bin/env bash
# Warm-cache read benchmark of the FUSE daemon, one runner, one run: fio 4 KiB random reads
# (1 and 4 jobs) and 1 MiB sequential reads with direct=1, 4 KiB random re-reads buffered of a
# file read whole just before by another open (the kernel's page cache between opens:
# close-to-open keeps it), and a metadata walk of a tree of
# small files (find with the attributes of every file; tar of the tree to /dev/null), on
#   flashdir        the daemon under test (build/daemon/flashdir)
#   passthrough_hp  libfuse's fast passthrough example, built from Debian's fuse3 source
#   backing         the backing directory itself (no FUSE)
# and the ratios flashdir/passthrough_hp and flashdir/backing. bench/README.md discusses a run.
#
# On a fresh Debian machine (as root, or with sudo) it installs what is missing (the build's
# packages, fio, dpkg-dev), adds a deb-src entry for the release if apt has none (so that
# `apt-get source fuse3` works), builds flashdir and passthrough_hp, then measures.
#
# direct=1 (O_DIRECT): every read reaches the FUSE daemon instead of the kernel page cache of
# the mount. The backing directory and the cache live on tmpfs (/dev/shm), where O_DIRECT is
# served from memory: passthrough_hp passes O_DIRECT on to the backing file, and on a disk its
# reads would measure the disk, not FUSE. Each target reads the whole file once first; for
# flashdir the runner then checks in the stats file that a second full read is all hits and
# that the timed runs miss nothing. The targets take turns, point by point, for several
# rounds, and each figure is the median over the rounds: on a shared machine a slow moment
# then hits every target alike instead of one.
#
#   bench/fuse/run.sh      env: FLASHDIR_BENCH_SIZE (256M), FLASHDIR_BENCH_SECONDS (5, per point),
#                               FLASHDIR_BENCH_ROUNDS (3), FLASHDIR_BENCH_MODE (writethrough),
#                               FLASHDIR_BENCH_DIR (/dev/shm: where backing and cache live),
#                               FLASHDIR_BENCH_OPTIONS (more -o options for flashdir)
# Writes the table to bench/fuse/results.md too.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
source "$here/../lib.sh"
size="${FLASHDIR_BENCH_SIZE:-256M}"
seconds="${FLASHDIR_BENCH_SECONDS:-5}"
rounds="${FLASHDIR_BENCH_ROUNDS:-3}"
mode="${FLASHDIR_BENCH_MODE:-writethrough}"
extra_options="${FLASHDIR_BENCH_OPTIONS:-}"

[ -c /dev/fuse ] || { echo "run.sh: /dev/fuse is missing: FUSE mounts are impossible here" >&2; exit 1; }
FLASHDIR_PACKAGES+=(dpkg-dev)
ensure_packages
ensure_deb_src
configure_release
ninja -C "$FLASHDIR_ROOT/build" daemon/flashdir >/dev/null
flashdir="$FLASHDIR_ROOT/build/daemon/flashdir"
passthrough_hp="$(build_passthrough_hp)"

work="$(mktemp -d "${FLASHDIR_BENCH_DIR:-/dev/shm}/flashdir-bench-XXXXXX")"
trap 'remove_bench_work "$work" "$work/flashdir" "$work/passthrough_hp"' EXIT
mkdir -p "$work/backing" "$work/flashdir" "$work/passthrough_hp"
fio --name=layout --directory="$work/backing" --filename=data --size="$size" --rw=write --bs=1M \
  --ioengine=psync --output=/dev/null

# seq_cutoff_read=0: the warm-up is one sequential stream over the whole file, which the
# default cutoff (16 MiB) would stop admitting; the benchmark measures a warm cache.
"$flashdir" "$work/backing" "$work/flashdir" \
  -o "cache=$work/cache,size=1G,mode=$mode,seq_cutoff_read=0${extra_options:+,$extra_options}" >"$work/flashdir.log" 2>&1 ||
  { cat "$work/flashdir.log" >&2; exit 1; }
"$passthrough_hp" "$work/backing" "$work/passthrough_hp"

# cache_counter NAME: one counter of the flashdir cache's stats.
cache_counter() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["cache"][sys.argv[2]])' \
    "$work/flashdir/.flashdir/stats.json" "$1"
}

read_whole_file() {
  fio --name=warm --directory="$1" --filename=data --size="$size" --rw=read --bs=1M --direct=1 \
    --ioengine=psync --output=/dev/null
}

targets=(flashdir passthrough_hp backing)
for target in "${targets[@]}"; do read_whole_file "$work/$target"; done
misses_before="$(cache_counter read_miss_pages)"
hits_before="$(cache_counter read_hit_pages)"
read_whole_file "$work/flashdir"
misses_warm="$(cache_counter read_miss_pages)"
hits_warm="$(cache_counter read_hit_pages)"
file_pages=$(( $(stat -c %s "$work/backing/data") / 4096 ))
if [ "$misses_warm" -ne "$misses_before" ] || [ $(( hits_warm - hits_before )) -lt "$file_pages" ]; then
  echo "run.sh: the flashdir cache is not warm: a second full read missed $(( misses_warm - misses_before ))" \
    "pages and hit $(( hits_warm - hits_before )) of $file_pages" >&2
  exit 1
fi
echo "run.sh: warm: a second full read of flashdir hit $(( hits_warm - hits_before )) pages, missed 0" >&2

# fio_run DIR RW BS JOBS DIRECT -> MiB/s (invalidate=0: fio would drop the file's pages before
# each job otherwise, and a buffered re-read would measure misses)
fio_run() {
  local dir="$1" rw="$2" bs="$3" jobs="$4" direct="$5"
  fio --name=bench --directory="$dir" --filename=data --size="$size" --rw="$rw" --bs="$bs" --numjobs="$jobs" \
    --direct="$direct" --invalidate=0 --ioengine=psync --time_based --runtime="$seconds" --ramp_time=1 --group_reporting \
    --randrepeat=0 --output-format=json |
    python3 -c 'import json, sys; print("%.1f" % (json.load(sys.stdin)["jobs"][0]["read"]["bw"] / 1024))'
}

# The metadata walks, in files per second (the tree's files over the walk's wall time, the best
# of three walks: each runs well under a second).
tree_files=5000
python3 - "$work/backing/tree" "$tree_files" <<'PY'
import os, sys
root, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    d = f"{root}/d{i // 100:02d}/e{i // 10 % 10}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i}.c", "wb") as f:
        f.write(os.urandom(1 + i % 4000))
PY
walk_run() {
  local dir="$1/tree" walk="$2"
  python3 - "$dir" "$walk" "$tree_files" <<'PY'
import subprocess, sys, timeit
tree, walk, files = sys.argv[1], sys.argv[2], int(sys.argv[3])
command = {"find": ["find", tree, "-printf", "%s %m %u %T@\n"], "tar": ["tar", "cf", "/dev/null", tree]}[walk]
best = min(timeit.repeat(lambda: subprocess.run(command, stdout=subprocess.DEVNULL, check=True), number=1, repeat=3))
print("%.1f" % (files / best))
PY
}

workloads=("randread 4k 1 direct" "randread 4k 4 direct" "read 1M 1 direct" "randread 4k 1 buffered" "find - - walk" "tar - - walk")
# Other work on the machine skews the figures; the results show how busy it was.
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
samples="$work/samples"  # lines: workload|target|MiB/s
for round in $(seq "$rounds"); do
  for workload in "${workloads[@]}"; do
    read -r rw bs jobs kind <<<"$workload"
    for target in "${targets[@]}"; do
      case "$kind" in
        direct) rate="$(fio_run "$work/$target" "$rw" "$bs" "$jobs" 1)"; label="$rw $bs x$jobs" ;;
        buffered)
          # Read whole through the page cache first, by another open: the timed run's open then
          # finds the file unchanged and keeps the pages (close-to-open), as passthrough_hp does.
          fio --name=warm --directory="$work/$target" --filename=data --size="$size" --rw=read --bs=1M \
            --ioengine=psync --output=/dev/null
          rate="$(fio_run "$work/$target" "$rw" "$bs" "$jobs" 0)"; label="$rw $bs x$jobs buffered, re-read" ;;
        walk) rate="$(walk_run "$work/$target" "$rw")"; label="$rw of $tree_files files" ;;
      esac
      echo "$label|$target|$rate" >>"$samples"
      echo "run.sh: round $round/$rounds, $label, $target: $rate" >&2
    done
  done
done
misses_after="$(cache_counter read_miss_pages)"

{
python3 - "$samples" "$misses_after" "$misses_warm" "$(cache_counter hit_ratio)" <<'PY'
import collections, statistics, sys
samples, misses_after, misses_warm, hit_ratio = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
runs = collections.defaultdict(list)
order = []
for line in open(samples):
    workload, target, mib = line.strip().split("|")
    if workload not in order:
        order.append(workload)
    runs[workload, target].append(float(mib))
median = {key: statistics.median(values) for key, values in runs.items()}
# A ratio is the median of the rounds' ratios: the targets of one round ran back to back, so a
# slow moment of the machine weighs on both sides of each.
def ratio(workload, other):
    return statistics.median(f / o for f, o in zip(runs[workload, "flashdir"], runs[workload, other]))
def cell(workload, target):
    rate = median[workload, target]
    if " files" in workload:
        return f"{rate:,.0f} files/s"
    iops = rate * 1024 / (4 if "4k" in workload else 1024)
    return f"{iops:,.0f} IOPS, {rate:,.1f} MiB/s"
print("| workload (warm; direct=1 unless buffered) | flashdir | passthrough_hp | backing | flashdir / passthrough_hp | flashdir / backing |")
print("|---|---|---|---|---|---|")
for w in order:
    print(f"| {w} | {cell(w, 'flashdir')} | {cell(w, 'passthrough_hp')} | {cell(w, 'backing')} | "
          f"{ratio(w, 'passthrough_hp'):.2f} | {ratio(w, 'backing'):.2f} |")
print()
print("Rates: medians of the rounds. Ratios: medians of the rounds' ratios; flashdir / passthrough_hp round by round: "
      + "; ".join(f"{w}: " + ", ".join(f"{a / b:.2f}" for a, b in zip(runs[w, "flashdir"], runs[w, "passthrough_hp"]))
                  for w in order))
print(f"flashdir cache: {misses_after - misses_warm} pages missed during the timed runs, "
      f"hit ratio {hit_ratio:.3f} over the whole mount (the first read filled it)")
PY
echo "file $size, ${seconds}s per point, $rounds rounds, mode=$mode${extra_options:+,$extra_options}," \
  "$(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), kernel $(uname -r), load average before:" \
  "$load_before, after: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M') UTC"
} | tee "$here/results.md"
