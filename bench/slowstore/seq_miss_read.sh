#!/usr/bin/env bash
# Sequential misses over a slow store (issue 19): fio's 1 MiB direct reads of a 128 MiB file on
# slowstore itself (1 ms a call) and through flashdir over it with a 16 MiB cache (every read a
# miss), taking turns for --rounds rounds (2). Prints MiB/s per run; needs root and /dev/fuse.
#
#   bench/slowstore/seq_miss_read.sh [--rounds N] [--latency-us US]
# Env: FLASHDIR_BENCH_DIR (/dev/shm): the backing file and the mounts; the cache goes beside them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ -c /dev/fuse ] || { echo "seq_miss_read.sh: /dev/fuse is missing" >&2; exit 1; }
FLASHDIR_PACKAGES+=(fio)
ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build" daemon/flashdir bench/slowstore/slowstore >/dev/null

rounds=2 latency_us=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --latency-us) latency_us="$2"; shift 2 ;;
    *) echo "seq_miss_read.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d "${FLASHDIR_BENCH_DIR:-/dev/shm}/seq-miss-XXXXXX")"
backing="$work/backing" store="$work/store" mnt="$work/mnt" cache="$work/cache"
mkdir -p "$backing" "$store" "$mnt"
unmount() { fusermount3 -u "$1" 2>/dev/null || fusermount3 -uz "$1" 2>/dev/null || true; }
cleanup() { unmount "$mnt"; sleep 0.2; unmount "$store"; rm -rf "$work"; }
trap cleanup EXIT
head -c 128M /dev/urandom > "$backing/big"
"$FLASHDIR_ROOT/build/bench/slowstore/slowstore" "$backing" "$store" -o "latency_us=$latency_us"

mib_per_s() {  # fio's terse output: field 7 is the read bandwidth in KiB/s
  fio --name=seq --filename="$1" --rw=read --bs=1M --direct=1 --size=128M --output-format=terse |
    awk -F';' '{printf "%.1f", $7 / 1024}'
}
for round in $(seq "$rounds"); do
  echo "round $round: slowstore $(mib_per_s "$store/big") MiB/s"
  rm -rf "$cache"
  "$FLASHDIR_ROOT/build/daemon/flashdir" "$store" "$mnt" -o "cache=$cache,size=16M" 2>/dev/null
  echo "round $round: flashdir over it, every read a miss $(mib_per_s "$mnt/big") MiB/s"
  unmount "$mnt"
done
