#!/usr/bin/env bash
# The shapes of xfstests generic/069 (O_APPEND writers) and generic/074 (fstest) through
# flashdir in write-through and write-back, through libfuse's passthrough_hp and on the backing
# directory: wall time and the daemon's CPU time, medians over rounds, and the ratios
# (bench/README.md, "Small writes from several processes"). Run as root after `ninja -C build`.
#
#   bench/fuse/contention.sh    env: FLASHDIR_BENCH_ROUNDS (3), FLASHDIR_BENCH_SCALE (10: the
#                               workloads divided by it, see xfstests_shapes.py),
#                               FLASHDIR_BENCH_DIR (/dev/shm), FLASHDIR_BENCH_OPTIONS (more -o
#                               options for flashdir), FLASHDIR_PASSTHROUGH_HP (the binary
#                               bench/fuse/run.sh builds; skipped if missing)
#
# Profiling one point: perf record -g -p PID (or -e syscalls:sys_enter_futex --call-graph dwarf)
# on the daemon while xfstests_shapes.py runs on its mount.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
flashdir="$root/build/daemon/flashdir"
passthrough_hp="${FLASHDIR_PASSTHROUGH_HP:-${XDG_CACHE_HOME:-$HOME/.cache}/flashdir-bench/passthrough_hp}"
rounds="${FLASHDIR_BENCH_ROUNDS:-3}"
scale="${FLASHDIR_BENCH_SCALE:-10}"
extra_options="${FLASHDIR_BENCH_OPTIONS:-}"
[ -x "$flashdir" ] || { echo "contention.sh: build $flashdir first (ninja -C build)" >&2; exit 1; }

work="$(mktemp -d "${FLASHDIR_BENCH_DIR:-/dev/shm}/flashdir-contention-XXXXXX")"
targets=(writethrough writeback backing)
[ -x "$passthrough_hp" ] && targets+=(passthrough_hp) ||
  echo "contention.sh: no passthrough_hp at $passthrough_hp (bench/fuse/run.sh builds it): not measured" >&2
declare -A pids
cleanup() {
  for target in "${targets[@]}"; do
    mountpoint -q "$work/$target" 2>/dev/null && { fusermount3 -u "$work/$target" 2>/dev/null || fusermount3 -uz "$work/$target"; }
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap cleanup EXIT

for target in "${targets[@]}"; do
  mkdir -p "$work/$target" "$work/backing-of-$target"
  case "$target" in
    writethrough | writeback)
      "$flashdir" "$work/backing-of-$target" "$work/$target" \
        -o "cache=$work/cache-$target,size=1G,mode=$target${extra_options:+,$extra_options}" >/dev/null 2>&1
      pids[$target]="$(cut -d' ' -f1 "$work/cache-$target/daemon.lock")" ;;  # "PID PROGRAM STATE"
    passthrough_hp)
      "$passthrough_hp" "$work/backing-of-$target" "$work/$target"
      pids[$target]="$(pgrep -f "passthrough_hp $work/backing-of-$target")" ;;
  esac
done

# cpu_seconds PID: user + system time of a process so far.
cpu_seconds() { awk -v tick="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / tick }' "/proc/$1/stat"; }

samples="$work/samples"  # lines: workload target wall cpu
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for workload in 069 074; do
    for target in "${targets[@]}"; do
      pid="${pids[$target]:-}"
      before="$([ -n "$pid" ] && cpu_seconds "$pid" || echo 0)"
      wall="$(python3 "$here/xfstests_shapes.py" "$work/$target" "$workload" "$scale")"
      after="$([ -n "$pid" ] && cpu_seconds "$pid" || echo 0)"
      echo "$workload $target $wall $(echo "$after - $before" | bc)" >>"$samples"
      echo "contention.sh: round $round/$rounds, $workload, $target: $wall s" >&2
    done
  done
done

python3 - "$samples" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    workload, target, wall, cpu = line.split()
    runs[workload, target].append((float(wall), float(cpu)))
def median(workload, target, i):
    return statistics.median(r[i] for r in runs[workload, target])
targets = [t for t in ("writethrough", "writeback", "passthrough_hp", "backing") if ("069", t) in runs]
print("| workload | " + " | ".join(f"{t}: wall (s)" if t == "backing" else f"{t}: wall, daemon CPU (s)" for t in targets)
      + " | flashdir / passthrough_hp: wall, daemon CPU (write-through; write-back) |")
print("|---|" + "---|" * (len(targets) + 1))
for workload in ("069", "074"):
    cells = [f"{median(workload, t, 0):.2f}, {median(workload, t, 1):.2f}" if t != "backing" else f"{median(workload, t, 0):.2f}"
             for t in targets]
    ratio = ("; ".join(f"{median(workload, t, 0) / median(workload, 'passthrough_hp', 0):.1f}, "
                       f"{median(workload, t, 1) / median(workload, 'passthrough_hp', 1):.1f}" for t in ("writethrough", "writeback"))
             if "passthrough_hp" in targets else "-")
    print(f"| generic/{workload} shape | " + " | ".join(cells) + f" | {ratio} |")
PY
echo "scale $scale, $rounds rounds (medians), $(nproc) CPUs, kernel $(uname -r), load average before: $load_before," \
  "after: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M') UTC"
