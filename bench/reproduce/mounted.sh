#!/usr/bin/env bash
# The FTL's counters on a mounted cache: formats a cache (default: mkfs.flashdir's mapping, GC,
# RAM policy and consolidation mode, 256 KiB of device RAM), mounts flashdir over a backing
# directory in /dev/shm, runs fio against it as a cache is used: files cached as they are
# written, a hot file then read over and over while other data is rewritten at random, then the
# hot file read alone; and prints the "ftl" section of MOUNT/.flashdir/stats.json after each
# phase: which mapping scheme, GC and RAM policy run, and how the CFTL counters (CBMT hits,
# conversions) and APS's (repartitions) move. bench/reproduce/README.md shows a run.
#
#   bench/reproduce/mounted.sh      env: FLASHDIR_MOUNTED_FTL (more mkfs.flashdir options, e.g.
#                                   "--ram-policy aps"; default none),
#                                   FLASHDIR_MOUNTED_SECONDS (10, per read phase),
#                                   FLASHDIR_MOUNTED_SIZE (256M, the cache)
#
# The mount is unmounted and the daemon gone in every outcome (remove_bench_work, on EXIT).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/setup.sh"
source "$here/../lib.sh"
seconds="${FLASHDIR_MOUNTED_SECONDS:-10}"
cache_size="${FLASHDIR_MOUNTED_SIZE:-256M}"
# shellcheck disable=SC2206
mkfs_options=(--size "$cache_size" --ram 256K ${FLASHDIR_MOUNTED_FTL:-})
# The data, in MiB of a cache of $cache_size: cold files written once (half the cache), a hot
# file (1/16), and a file rewritten at random (1/8), so that the rewrites make GC work.
cache_mib=$(( $(numfmt --from=iec "$cache_size") >> 20 ))
cold_files=4
cold_mib=$(( cache_mib / 8 ))
hot_mib=$(( cache_mib / 16 ))
churn_mib=$(( cache_mib / 8 ))

[ -c /dev/fuse ] || { echo "mounted.sh: /dev/fuse is missing: FUSE mounts are impossible here" >&2; exit 1; }
ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build" daemon/flashdir mkfs/mkfs.flashdir >/dev/null
flashdir="$FLASHDIR_ROOT/build/daemon/flashdir"
mkfs="$FLASHDIR_ROOT/build/mkfs/mkfs.flashdir"

work="$(mktemp -d /dev/shm/flashdir-mounted-XXXXXX)"
trap 'remove_bench_work "$work" "$work/mnt"' EXIT
mkdir -p "$work/backing" "$work/mnt"
"$mkfs" "$work/cache" "${mkfs_options[@]}" >"$work/mkfs.log"
# Everything admitted (no sequential cutoff), write-back so that writes reach the chip at once.
"$flashdir" "$work/backing" "$work/mnt" \
  -o "cache=$work/cache,mode=writeback,seq_cutoff_read=0,seq_cutoff_write=0" >"$work/flashdir.log" 2>&1 ||
  { cat "$work/flashdir.log" >&2; exit 1; }
is_mounted "$work/mnt" || { echo "mounted.sh: $work/mnt is not mounted" >&2; cat "$work/flashdir.log" >&2; exit 1; }

# snapshot LABEL: the ftl section of stats.json now, as one JSON line, kept for the table.
snapshot() {
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["ftl"]; d["phase"] = sys.argv[2]; print(json.dumps(d))' \
    "$work/mnt/.flashdir/stats.json" "$1" >>"$work/snapshots.jsonl"
}
# fio_phase NAME FIO-ARGS...: one fio run (its jobs name their files), output kept.
fio_phase() {
  local name="$1"
  shift
  fio --ioengine=psync --direct=1 --randrepeat=0 "$@" --output-format=terse --terse-version=3 >"$work/fio-$name.txt"
}
# Job options: each job names its own directory (fio takes an option given before the first
# --name for every job, one after it for that job only).
hot_reader=(--name=hot --directory="$work/mnt" --filename=hot --size="${hot_mib}M" --rw=read --bs=128k
  --time_based --runtime="$seconds")

echo "mkfs.flashdir ${mkfs_options[*]}; $cold_files files of $cold_mib MiB, hot file $hot_mib MiB, rewritten file" \
  "$churn_mib MiB, $seconds s per read phase; $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
snapshot mounted
fio_phase files --name=cold --directory="$work/mnt" --nrfiles="$cold_files" --filesize="${cold_mib}M" --rw=write --bs=1M \
  --name=churn --stonewall --directory="$work/mnt" --filename=churn --size="${churn_mib}M" --rw=write --bs=1M
snapshot "files written"
fio_phase hot-write --name=hot --directory="$work/mnt" --filename=hot --size="${hot_mib}M" --rw=write --bs=1M
snapshot "hot file written"
fio_phase mixed "${hot_reader[@]}" \
  --name=churn --directory="$work/mnt" --filename=churn --size="${churn_mib}M" --rw=randwrite --bs=4k \
  --time_based --runtime="$seconds" --end_fsync=1
snapshot "hot reads + rewrites"
fio_phase hot-read "${hot_reader[@]}"
snapshot "hot reads"
# What `flashdir stats` says of the device (its summary's "Device FTL" lines).
"$flashdir" stats "$work/mnt" >"$work/summary.txt"
grep -A1 '^Device FTL' "$work/summary.txt"

python3 - "$work/snapshots.jsonl" <<'PY'
import json, sys
snaps = [json.loads(line) for line in open(sys.argv[1])]
first = snaps[0]
print(f"mapping {first.get('mapping_scheme')}, GC {first.get('gc_policy')}, RAM policy {first.get('ram_policy')}, "
      f"consolidation {first.get('consolidation')}, device RAM {first.get('ram_budget_bytes', 0) // 1024} KiB")
rows = [("host pages written", "host_write_pages"), ("host pages read", "host_read_pages"),
        ("chip programs", "chip_page_programs"), ("chip erases", "chip_block_erases"),
        ("mapping lookups", "mapping_lookups"), ("mapping hits", "mapping_hits"),
        ("CBMT lookups", "cbmt_lookups"), ("CBMT hits", "cbmt_hits"),
        ("conversions to block", "conversions_to_block"), ("conversions to page", "conversions_to_page"),
        ("consolidation copies", "consolidation_copies"), ("APS repartitions", "aps_repartitions"),
        ("buffer write hits", "buffer_write_hits"), ("mapping RAM KiB", "ram_mapping_bytes"),
        ("buffer RAM KiB", "ram_buffer_bytes")]
print("| counter | " + " | ".join(s["phase"] for s in snaps) + " |")
print("|---" * (len(snaps) + 1) + "|")
for label, key in rows:
    cells = []
    for s in snaps:
        v = s.get(key)
        cells.append("-" if v is None else str(v // 1024 if key.endswith("_bytes") else v))
    print(f"| {label} | " + " | ".join(cells) + " |")
PY
