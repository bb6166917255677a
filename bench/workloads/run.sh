#!/usr/bin/env bash
# The standard file-system workloads through flashdir, one runner, one run (issue 20):
#   dbench    4.0 (Debian), the default load file (client.txt, the NetBench trace of a file
#             server's clients), N clients for S seconds: dbench's MB/s
#   postmark  1.53 (Debian's prints "v1.51"), small files (512 B to 16 KiB) in 10 directories:
#             creates, reads, appends, deletes; transactions/s over its transaction phase
#   sysbench  1.0.20 fileio over 16 files: rndrw (random 16 KiB reads and writes 3:2, fsync
#             every 100 requests) and seqrd, for S seconds, with its checksum validation of
#             every block read: reads/s and writes/s
# on the targets, which take turns in each round:
#   writethrough, writeback   flashdir (build/daemon/flashdir) in that mode
#   writeback_delay           flashdir in write-back with writeback_delay=1 (a close returns once
#                             the data is durable in the cache)
#   passthrough_hp            libfuse's fast passthrough example, built from Debian's fuse3 source,
#                             with its defaults: the kernel's writeback cache, entry and attribute
#                             timeouts of a day, the kernel's pages kept between opens
#   passthrough_hp_nocache    the same with --nocache: none of those (timeouts 0, every write and
#                             every read of a new open reaches the daemon); flashdir keeps less in
#                             the kernel than the first and more than the second (doc/daemon.md)
#   backing                   the store itself: a directory of the backing file system (no
#                             FUSE), or with --store slowstore the slowstore mount
# and the ratios of each flashdir mode to each of the others. bench/README.md discusses a run.
#
# --store slowstore: every target's backing directory is a slowstore mount of its own (the
# store of bench/slowstore/, build/bench/slowstore/slowstore, --latency-us per call: 1000), so
# the figures are flashdir in front of a slow store against the store itself (target backing,
# labelled slowstore). Its defaults are shorter runs (most calls cost a millisecond): targets
# "backing writethrough writeback writeback_delay", 8 s runs, postmark 300 files and 600
# transactions, sysbench 64M; about 14 minutes. It writes results-slowstore.{md,png,dat}.
#
# As bench/fuse/run.sh: every target's backing directory and flashdir's caches live on tmpfs
# (/dev/shm), so what is measured is the FUSE daemons, not a disk; flashdir mounts with a 1 GiB
# cache and seq_cutoff_read=0 (its consistency default, cto: attribute timeouts of 3 to 60 s,
# the kernel's pages of an unchanged file kept between opens, no writeback cache). On a fresh
# Debian machine (root or sudo) it installs what is missing (the build's packages, dbench,
# postmark, sysbench, dpkg-dev), builds flashdir and passthrough_hp.
#
# Checks, so that no figure comes from a run that did not happen or went wrong: every run of a
# workload exits 0 and prints none of its error lines (workloads.py); on a flashdir mount the
# run moved data through the mount's files (.flashdir/stats.json) and the cache still caches;
# passthrough_hp's daemon still runs and its mount is there after each run; sysbench validates the checksum of every block it
# reads (its files prepared with them); at the end each flashdir mount's sysbench files are
# compared byte for byte with their backing files.
#
#   bench/workloads/run.sh [--store tmpfs|slowstore] [--latency-us N]
#                              env: FLASHDIR_BENCH_SECONDS (6: dbench's and each sysbench
#                              test's run), FLASHDIR_BENCH_ROUNDS (3),
#                              FLASHDIR_BENCH_TARGETS ("writethrough writeback passthrough_hp
#                              passthrough_hp_nocache backing"; writeback_delay too),
#                              FLASHDIR_BENCH_WORKLOADS ("dbench postmark sysbench"),
#                              FLASHDIR_BENCH_CLIENTS (2: dbench's clients),
#                              FLASHDIR_BENCH_POSTMARK ("1000 4000": files, transactions),
#                              FLASHDIR_BENCH_SYSBENCH_SIZE (256M: total of the 16 files),
#                              FLASHDIR_BENCH_DIR (/dev/shm), FLASHDIR_BENCH_OPTIONS (more -o
#                              options for flashdir)
# About 7 minutes with the defaults. Writes bench/workloads/results.md, results.png and
# results.dat (the ratios: gnuplot -e "data='results.dat'; output='results.png'" plot.gp).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
source "$here/../lib.sh"
store=tmpfs
latency_us=1000
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --store) store="${2:-}"; shift 2 || true ;;
    --store=*) store="${1#--store=}"; shift ;;
    --latency-us) latency_us="${2:-}"; shift 2 || true ;;
    --latency-us=*) latency_us="${1#--latency-us=}"; shift ;;
    *) echo "run.sh: unknown argument $1 (--help); the other knobs are environment variables" >&2; exit 2 ;;
  esac
done
case "$store" in
  tmpfs)
    default_targets="writethrough writeback passthrough_hp passthrough_hp_nocache backing"
    default_seconds=6 default_postmark="1000 4000" default_sysbench_size=256M results_name=results ;;
  slowstore)
    default_targets="backing writethrough writeback writeback_delay"
    default_seconds=8 default_postmark="300 600" default_sysbench_size=64M results_name=results-slowstore ;;
  *) echo "run.sh: --store is tmpfs or slowstore, not '$store'" >&2; exit 2 ;;
esac
[[ "$latency_us" =~ ^[0-9]+$ ]] || { echo "run.sh: --latency-us takes microseconds, not '$latency_us'" >&2; exit 2; }
seconds="${FLASHDIR_BENCH_SECONDS:-$default_seconds}"
rounds="${FLASHDIR_BENCH_ROUNDS:-3}"
read -r -a targets <<<"${FLASHDIR_BENCH_TARGETS:-$default_targets}"
read -r -a workloads <<<"${FLASHDIR_BENCH_WORKLOADS:-dbench postmark sysbench}"
clients="${FLASHDIR_BENCH_CLIENTS:-2}"
read -r postmark_files postmark_transactions <<<"${FLASHDIR_BENCH_POSTMARK:-$default_postmark}"
sysbench_size="${FLASHDIR_BENCH_SYSBENCH_SIZE:-$default_sysbench_size}"
extra_options="${FLASHDIR_BENCH_OPTIONS:-}"
for target in "${targets[@]}"; do
  case "$target" in writethrough | writeback | writeback_delay | passthrough_hp | passthrough_hp_nocache | backing) ;;
    *) echo "run.sh: unknown target $target" >&2; exit 2 ;; esac
done
for workload in "${workloads[@]}"; do
  case "$workload" in dbench | postmark | sysbench) ;;
    *) echo "run.sh: unknown workload $workload" >&2; exit 2 ;; esac
done

[ -c /dev/fuse ] || { echo "run.sh: /dev/fuse is missing: FUSE mounts are impossible here" >&2; exit 1; }
FLASHDIR_PACKAGES+=(dbench postmark sysbench dpkg-dev coreutils bc python3)
ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build" daemon/flashdir bench/slowstore/slowstore >/dev/null
flashdir="$FLASHDIR_ROOT/build/daemon/flashdir"
slowstore="$FLASHDIR_ROOT/build/bench/slowstore/slowstore"
passthrough_hp=""
if [[ " ${targets[*]} " == *" passthrough_hp"* ]]; then
  ensure_deb_src
  passthrough_hp="$(build_passthrough_hp)"
fi

work="$(mktemp -d "${FLASHDIR_BENCH_DIR:-/dev/shm}/flashdir-workloads-XXXXXX")"
# The daemons over a slowstore mount first (a write-back daemon writes back what is dirty after
# its unmount, through the store), then the stores.
cleanup() {
  local target
  for target in writethrough writeback writeback_delay passthrough_hp passthrough_hp_nocache; do
    unmount_and_wait "$work/$target" "$(daemon_pid_of "$target")"
  done
  remove_bench_work "$work" "$work/backing" "$work"/store-of-*
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# daemon_pid_of TARGET: the pid of the target's daemon as its files name it ("" if none).
daemon_pid_of() {
  local file="$work/cache-$1/daemon.lock"
  [ -f "$file" ] || file="$work/$1.pid"
  [ -f "$file" ] && cut -d' ' -f1 "$file" || true
}

# mount_store TARGET: sets `under` to the directory the target's daemon stands on: a directory of
# the backing file system, or a slowstore mount of one (--store slowstore; its pid in
# store_pids). For the target backing, the directory its workloads run in.
declare -A store_pids
mount_store() {
  local target="$1"
  under="$work/backing-of-$target"
  mkdir -p "$under"
  [ "$store" = slowstore ] || return 0
  local mountpoint="$work/store-of-$target"
  [ "$target" = backing ] && mountpoint="$work/backing"
  mkdir -p "$mountpoint"
  mount_slowstore "$slowstore" "$under" "$mountpoint" "$work/store-of-$target" "latency_us=$latency_us" || exit 1
  store_pids[$mountpoint]="$(cat "$work/store-of-$target.pid")"
  under="$mountpoint"
}

# The directory each target's workloads run in, and its daemon's pid (none for backing).
declare -A pids
mount_target() {
  local target="$1" under
  mount_store "$target"
  mkdir -p "$work/$target"
  case "$target" in
    writethrough | writeback | writeback_delay)
      local mode="mode=$target"
      [ "$target" = writeback_delay ] && mode="mode=writeback,writeback_delay=1"
      "$flashdir" "$under" "$work/$target" \
        -o "cache=$work/cache-$target,size=1G,$mode,seq_cutoff_read=0${extra_options:+,$extra_options}" \
        >"$work/$target.log" 2>&1 || { cat "$work/$target.log" >&2; exit 1; }
      pids[$target]="$(daemon_pid_of "$target")" ;;
    passthrough_hp | passthrough_hp_nocache)
      local options=(--foreground)
      [ "$target" = passthrough_hp_nocache ] && options+=(--nocache)
      start_fuse_daemon "$work/$target" "$work/$target" "$passthrough_hp" "${options[@]}" "$under" "$work/$target" || exit 1
      pids[$target]="$(daemon_pid_of "$target")" ;;
  esac
}
for target in "${targets[@]}"; do mount_target "$target"; done

# flashdir_io TARGET: the bytes read and written through a flashdir mount's files so far, and
# its cache's state ("caching" unless it stopped).
flashdir_io() { python3 "$here/workloads.py" flashdir-io "$work/$1/.flashdir/stats.json"; }
is_flashdir() { [ "$1" = writethrough ] || [ "$1" = writeback ] || [ "$1" = writeback_delay ]; }

# run_one WORKLOAD TARGET ROUND: runs the workload once in the target's directory; prints lines
# "point|value" (one per figure it yields).
run_one() {
  local workload="$1" target="$2" round="$3" dir="$work/$2" out="$work/out"
  case "$workload" in
    dbench)
      # dbench writes its clients' files under DIR/clients and removes them at the end.
      (cd "$work" && dbench -D "$dir" -t "$seconds" "$clients") >"$out" 2>&1 ||
        { cat "$out" >&2; echo "run.sh: dbench failed on $target" >&2; return 1; }
      local mbps
      mbps="$(python3 "$here/workloads.py" dbench "$out")" || return 1
      echo "dbench $clients clients, MB/s|$mbps" ;;
    postmark)
      mkdir -p "$dir/postmark"
      local rate_wall rate
      rate_wall="$(python3 "$here/workloads.py" postmark "$dir/postmark" "$postmark_files" \
        "$postmark_transactions" "$round")" || return 1
      read -r rate _ <<<"$rate_wall"
      echo "postmark $postmark_files files, $postmark_transactions transactions, transactions/s|$rate" ;;
    sysbench-rndrw | sysbench-seqrd)
      local test="${workload#sysbench-}" rates reads writes
      (cd "$dir/sysbench" && sysbench fileio --file-total-size="$sysbench_size" --file-num=16 --validate=on \
        --file-test-mode="$test" --time="$seconds" --threads=1 run) >"$out" 2>&1 ||
        { cat "$out" >&2; echo "run.sh: sysbench $test failed on $target" >&2; return 1; }
      rates="$(python3 "$here/workloads.py" sysbench "$out")" || return 1
      read -r reads writes <<<"$rates"
      echo "sysbench $test, reads/s|$reads"
      if [ "$test" = rndrw ]; then echo "sysbench $test, writes/s|$writes"; fi ;;
  esac
}

# sysbench's files, made once per target before the rounds (with the checksums its validation
# reads back), through the mount.
if [[ " ${workloads[*]} " == *" sysbench "* ]]; then
  for target in "${targets[@]}"; do
    mkdir -p "$work/$target/sysbench"
    (cd "$work/$target/sysbench" && sysbench fileio --file-total-size="$sysbench_size" --file-num=16 \
      --validate=on prepare) >"$work/out" 2>&1 || { cat "$work/out" >&2; echo "run.sh: sysbench prepare failed on $target" >&2; exit 1; }
  done
fi

# sysbench's two tests take turns as two workloads.
points=()
for workload in "${workloads[@]}"; do
  [ "$workload" = sysbench ] && points+=(sysbench-rndrw sysbench-seqrd) || points+=("$workload")
done

# Other work on the machine skews the figures; the results show how busy it was.
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
started="$(date +%s)"
samples="$work/samples"  # lines: point|target|value|daemon CPU seconds of the run (- for backing)
for round in $(seq "$rounds"); do
  for workload in "${points[@]}"; do
    for target in "${targets[@]}"; do
      pid="${pids[$target]:-}"
      cpu_before="$([ -n "$pid" ] && cpu_seconds "$pid" || echo -)"
      is_flashdir "$target" && read -r io_before _ < <(flashdir_io "$target")
      figures="$(run_one "$workload" "$target" "$round")" || exit 1
      cpu="-"
      if [ -n "$pid" ]; then
        process_running "$pid" || { echo "run.sh: the $target daemon ($pid) ended during $workload" >&2; exit 1; }
        cpu="$(echo "$(cpu_seconds "$pid") - $cpu_before" | bc)"
      fi
      # The run happened on the mount: flashdir moved data through its files and still caches;
      # passthrough_hp still runs and its mount is there (its daemon may not have worked for a
      # whole run: the kernel serves sysbench's seqrd from its page cache, which passthrough_hp
      # keeps between opens, and its threads come and go, so CPU time shows little).
      if is_flashdir "$target"; then
        read -r io_after state < <(flashdir_io "$target")
        if [ "$io_after" -le "$io_before" ] || [ "$state" != caching ]; then
          echo "run.sh: $workload on $target moved $(( io_after - io_before )) bytes through the mount, cache $state" >&2
          exit 1
        fi
      elif [[ "$target" == passthrough_hp* ]] && [[ "$(mount_type "$work/$target")" != fuse* ]]; then
        echo "run.sh: $work/$target is no longer a FUSE mount after $workload" >&2
        exit 1
      fi
      # Over slowstore: every store still runs and is mounted.
      if [ "$store" = slowstore ]; then
        for mountpoint in "${!store_pids[@]}"; do
          process_running "${store_pids[$mountpoint]}" && [[ "$(mount_type "$mountpoint")" == fuse* ]] ||
            { echo "run.sh: the slowstore of $mountpoint ended or lost its mount during $workload on $target" >&2; exit 1; }
        done
      fi
      while IFS='|' read -r point value; do
        echo "$point|$target|$value|$cpu" >>"$samples"
        echo "run.sh: round $round/$rounds, $point, $target: $value (daemon CPU ${cpu} s)" >&2
      done <<<"$figures"
    done
  done
done
elapsed=$(( $(date +%s) - started ))
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# Every byte of the sysbench files, as each flashdir mount returns them, against its backing
# files in the backing file system (under slowstore, if any). Write-back writes a file back at
# its close, with writeback_delay up to a second after it: a file that differs is compared
# again for up to a minute.
checked=""
if [[ " ${workloads[*]} " == *" sysbench "* ]]; then
  for target in "${targets[@]}"; do
    is_flashdir "$target" || continue
    for file in "$work/backing-of-$target"/sysbench/test_file.*; do
      for attempt in $(seq 60) fail; do
        [ "$attempt" != fail ] || { echo "run.sh: $target returns other bytes than its backing file ${file##*/}" >&2; exit 1; }
        cmp -s "$work/$target/sysbench/${file##*/}" "$file" && break
        sleep 1
      done
    done
    checked+="${checked:+, }$target"
  done
fi

summaries=""
for target in "${targets[@]}"; do
  is_flashdir "$target" || continue
  summaries+="${summaries:+; }$target: $(python3 "$here/workloads.py" flashdir-summary "$work/$target/.flashdir/stats.json")"
  # Unmounted here (write-back writes back what is dirty), so that its log holds the close too:
  # what the daemon logged as errors goes into the results (a run's figures stand, but they
  # say so).
  unmount_and_wait "$work/$target" "${pids[$target]}"
  errors="$(grep -c '\[error\]' "$work/cache-$target/daemon.log" || true)"
  if [ "$errors" -gt 0 ]; then
    summaries+=", $errors error lines in its log, first and last: $(grep '\[error\]' "$work/cache-$target/daemon.log" |
      sed -n '1p; $p' | sed 's/^\[[^]]*\] \[flashdir\] \[error\] //' | paste -sd '|' | sed 's/|/ ... /')"
  else
    summaries+=", no error in its log"
  fi
done

plot_data="$here/$results_name.dat"  # the ratios plot.gp draws, kept beside the table to draw again
store_line="a directory of ${FLASHDIR_BENCH_DIR:-/dev/shm} (tmpfs), no FUSE"
backing_name=backing
if [ "$store" = slowstore ]; then
  store_line="slowstore, latency_us=$latency_us per call, each target over its own slowstore mount of ${FLASHDIR_BENCH_DIR:-/dev/shm}"
  backing_name=slowstore
fi
{
  echo "# Standard workloads through flashdir (bench/workloads/run.sh)"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M') UTC, $rounds rounds, ${seconds} s per dbench and sysbench run," \
    "dbench $clients clients, postmark $postmark_files files and $postmark_transactions transactions," \
    "sysbench $sysbench_size in 16 files, 1 thread; flashdir: size=1G, seq_cutoff_read=0${extra_options:+, $extra_options};" \
    "store: $store_line;" \
    "$(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), kernel $(uname -r);" \
    "load average before: $load_before, after: $load_after; the rounds took ${elapsed} s."
  echo
  python3 "$here/workloads.py" table "$samples" "$plot_data" "$backing_name" "$results_name.png"
  echo
  [ -n "$summaries" ] && echo "flashdir mounts at the end: $summaries."
  [ -n "$checked" ] && echo "sysbench files read through the mount equal to their backing files: $checked."
} | tee "$here/$results_name.md"
if [ "$(head -n 1 "$plot_data" | awk -F '\t' '{ print NF }')" -gt 1 ]; then
  gnuplot -e "data='$plot_data'; output='$here/$results_name.png'; store='$backing_name'" "$here/plot.gp"
  echo "run.sh: wrote $here/$results_name.md and $here/$results_name.png" >&2
else
  echo "run.sh: wrote $here/$results_name.md (no ratio to plot: flashdir or the others were not measured)" >&2
fi
