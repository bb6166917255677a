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

echo "### 1. mkfs.flashdir: a 64 MiB cache with SLC timings and 1 MiB of device RAM (TreeFTL)"
"$bin/mkfs/mkfs.flashdir" "$cache" --size 64M --latency slc --ram 1M --ram-policy tree --force
echo
echo "### 2. random I/O through the FTL, a power cut at a random chip operation, recovery"
"$bin/demo/flashdir-powercut-demo" "$cache" --seed "${FLASHDIR_DEMO_SEED:-$RANDOM}" --requests 60000
echo
echo "### 3. fsck.flashdir: checkpoint + roll-forward against a rebuild from a full scan"
"$bin/fsck/fsck.flashdir" -n "$cache"
