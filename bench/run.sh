#!/usr/bin/env bash
# Every benchmark of the mount, one after another, in one run: the runners below, each of which
# installs what it needs, builds what it runs, checks what it measures, writes its results and
# plots where bench/README.md says, and leaves no mount behind. A runner that fails is reported
# and the others still run; the exit status says whether all of them passed.
#
#   bench/run.sh            # everything: about 80 minutes by the runners' own times (16 GiB of disk for the restart sizes)
#   bench/run.sh --quick    # each runner's short form: about 25 minutes by theirs
#
# The runners, in order (bench/README.md has a section on each, with its latest figures):
#   fuse/run.sh            fio through flashdir, passthrough_hp and the backing (direct reads, buffered re-reads, find, tar)
#   fio/run.sh             the fio matrix: reads, writes, mixed; warm and miss; 1-8 jobs; fast backing and slow store
#   slowstore/run.sh       a git-checkout tree over a slow store: git status, find, tar, small files, random reads, remounts
#   slowstore/run.sh --writes   random and sequential writes and appends over the slow store
#   workloads/run.sh       dbench, postmark, sysbench fileio over tmpfs, and again over the slow store
#   restart/run.py         usable pages after kill -9, restart time and daemon memory against the cache's size
#   reproduce/run.sh       the simulator's comparisons of the papers (bench/reproduce/README.md)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  -h | --help) usage; exit 0 ;;
  *) usage >&2; exit 2 ;;
esac

source "$here/../scripts/setup.sh"
ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build" daemon/flashdir >/dev/null || exit 1
export FLASHDIR="$FLASHDIR_ROOT/build/daemon/flashdir"  # restart/run.py runs it as it is

if [ $quick -eq 1 ]; then
  runs=(
    "fuse/run.sh"
    "fio/run.sh --quick"
    "slowstore/run.sh --files 1000 --blobs 50 --big 4M --rounds 1 --fio-seconds 2"
    "slowstore/run.sh --writes --rounds 1 --seconds 5"
    "workloads/run.sh"
    "workloads/run.sh --store slowstore"
    "restart/run.py --quick --sizes 256M,1G"
    "reproduce/run.sh --quick"
  )
  export FLASHDIR_BENCH_ROUNDS=1  # fuse/run.sh and workloads/run.sh
else
  runs=(
    "fuse/run.sh"
    "fio/run.sh"
    "slowstore/run.sh"
    "slowstore/run.sh --writes"
    "workloads/run.sh"
    "workloads/run.sh --store slowstore"
    "restart/run.py"
    "reproduce/run.sh"
  )
fi

failed=()
for run in "${runs[@]}"; do
  echo "=== bench/$run ($(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg))"
  # Word splitting is meant: each entry is a runner and its options.
  # shellcheck disable=SC2086
  if ! "$here"/$run; then
    echo "=== bench/$run FAILED"
    failed+=("$run")
  fi
done
echo "=== done ($(date -u '+%H:%M UTC')); the results are in the files each runner named above"
if [ ${#failed[@]} -gt 0 ]; then
  printf '=== failed: %s\n' "${failed[@]}"
  exit 1
fi
