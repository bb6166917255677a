#!/usr/bin/env bash
# The FTL's counters on a mounted cache: formats a small cache whose device RAM policy and
# mapping scheme act (default: CFTL under APS, 256 KiB of device RAM), mounts flashdir over a
# backing directory in /dev/shm, runs fio against it (a file written sequentially, then random
# 4 KiB reads, then random 4 KiB writes, then random reads again) and prints the "ftl" section
# of MOUNT/.flashdir/stats.json after each phase: which mapping scheme, GC and RAM policy run,
# and how the CFTL counters (CBMT hits, conversions) and APS's (repartitions, the split) move.
# bench/reproduce/README.md shows a run.
#
#   bench/reproduce/mounted.sh      env: FLASHDIR_MOUNTED_FTL (the mapping and RAM policy as
#                                   mkfs.flashdir options; default "--mapping cftl --ram-policy aps"),
#                                   FLASHDIR_MOUNTED_SECONDS (10, per random phase),
#                                   FLASHDIR_MOUNTED_FILE (48M)
#
# The mount is unmounted and the daemon gone in every outcome (remove_bench_work, on EXIT).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/setup.sh"
source "$here/../lib.sh"
seconds="${FLASHDIR_MOUNTED_SECONDS:-10}"
file_size="${FLASHDIR_MOUNTED_FILE:-48M}"
# shellcheck disable=SC2206
mkfs_options=(--size 64M --ram 256K ${FLASHDIR_MOUNTED_FTL:---mapping cftl --ram-policy aps})

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
fio_phase() {
  local rw="$1"
  shift
  fio --name="$rw" --directory="$work/mnt" --filename=data --size="$file_size" --rw="$rw" --bs=4k \
    --ioengine=psync --direct=1 --randrepeat=0 "$@" --output-format=terse --terse-version=3 >"$work/fio-$rw.txt"
}

echo "mkfs.flashdir ${mkfs_options[*]}; fio over $file_size, $seconds s per random phase; $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
snapshot mounted
fio_phase write --bs=1M
snapshot "sequential write"
fio_phase randread --time_based --runtime="$seconds"
snapshot "random read"
fio_phase randwrite --time_based --runtime="$seconds" --end_fsync=1
snapshot "random write"
fio_phase randread --time_based --runtime="$seconds"
snapshot "random read"
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
