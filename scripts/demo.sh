#!/usr/bin/env bash
# Installs what is missing, builds flashdir and runs the demo: format a cache, write to its
# NAND chip until a power cut, reopen the image and show what survived, then fsck it.
#   scripts/demo.sh [CACHE_DIR]   (default: a fresh directory under /tmp, removed afterwards)
set -euo pipefail
source "$(dirname "$0")/setup.sh"

ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build"

bin="$FLASHDIR_ROOT/build"
if [ $# -ge 1 ]; then
  cache="$1"
else
  cache="$(mktemp -d /tmp/flashdir-demo-XXXXXX)/cache"
  trap 'rm -rf "$(dirname "$cache")"' EXIT
fi

echo "### 1. mkfs.flashdir: a 64 MiB cache with SLC timings"
"$bin/mkfs/mkfs.flashdir" "$cache" --size 64M --latency slc --force
echo
echo "### 2. a log-structured workload on the chip, with a power cut in the middle"
"$bin/demo/flashdir-chip-demo" "$cache" --seed "${FLASHDIR_DEMO_SEED:-$RANDOM}" --pages 20000
echo
echo "### 3. fsck.flashdir on the image the power cut left behind"
echo "###    (a torn page is reported until the FTL, which skips it, arrives)"
"$bin/fsck/fsck.flashdir" -n "$cache" || true
