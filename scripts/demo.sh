#!/usr/bin/env bash
# Installs what is missing, builds flashdir and runs a demo.
#   scripts/demo.sh                  flashdir mounted over a slow store (1 ms a call): a sample
#                                    tree read cold and warm, the daemon killed with writes in
#                                    flight, the cache mounted again and read warm, for LUFUW and
#                                    write-update metadata, every byte checked; a table and a PNG
#                                    in $FLASHDIR_DEMO_OUT (/tmp/flashdir-demo). Root, /dev/fuse.
#   scripts/demo.sh chip [CACHE_DIR] the chip and FTL alone: format a cache, write to its NAND
#                                    chip until a power cut, reopen the image and show what
#                                    survived, then fsck it (CACHE_DIR: default a fresh
#                                    directory under /tmp, removed afterwards)
set -euo pipefail
source "$(dirname "$0")/setup.sh"

ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build"
bin="$FLASHDIR_ROOT/build"

if [ "${1:-}" != chip ]; then
  [ "$(id -u)" -eq 0 ] || { echo "demo.sh: the mount demo needs root (FUSE mounts, dropping the page cache); 'demo.sh chip' does not" >&2; exit 1; }
  [ -c /dev/fuse ] || { echo "demo.sh: /dev/fuse is missing: FUSE mounts are impossible here; try 'demo.sh chip'" >&2; exit 1; }
  FLASHDIR_BUILD_ROOT="$bin" exec python3 "$FLASHDIR_ROOT/demo/mount_demo.py"
fi
shift
if [ $# -ge 1 ]; then
  cache="$1"
else
  cache="$(mktemp -d /tmp/flashdir-demo-XXXXXX)/cache"
  trap 'rm -rf "$(dirname "$cache")"' EXIT
fi

echo "### 1. mkfs.flashdir: a 64 MiB cache with SLC timings and 1 MiB of device RAM (TreeFTL)"
"$bin/mkfs/mkfs.flashdir" "$cache" --size 64M --latency slc --ram 1M --ram-policy tree --force
echo
echo "### 2. random I/O through the FTL, a power cut at a random chip operation, recovery"
"$bin/demo/flashdir-powercut-demo" "$cache" --seed "${FLASHDIR_DEMO_SEED:-$RANDOM}" --requests 60000
echo
echo "### 3. fsck.flashdir: checkpoint + roll-forward against a rebuild from a full scan"
"$bin/fsck/fsck.flashdir" -n "$cache"
