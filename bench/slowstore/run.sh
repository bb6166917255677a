#!/usr/bin/env bash
# flashdir over a slow store against the slow store itself (issue 19), one runner, one run:
# installs what is missing, builds flashdir and slowstore, and runs bench/slowstore/run.py
# (which says what it measures) in a work directory whose mounts come down in every outcome.
#
#   bench/slowstore/run.sh [run.py options]     e.g. --rounds 5, --latency-us 500,
#                                               --slowstore-options attr_timeout=3, --no-kill
#   bench/slowstore/run.sh --writes [writes.py options]   writes instead (writes.py): random,
#                                               sequential writes and appends, write-through and write-back,
#                                               and libfuse's passthrough_hp over the store
#   bench/slowstore/run.sh [--writes] --store sshfs [--delay-us 1000]   against sshfs over a
#                                               localhost sshd behind a TCP delay proxy instead of
#                                               slowstore (sshfs_store.py installs openssh-server and
#                                               sshfs; "skipped: why" and exit 0 where it cannot)
# Env: FLASHDIR_BENCH_DIR (/dev/shm): where the backing, the mounts and the cache live.
# Writes the tables to bench/slowstore/results.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ -c /dev/fuse ] || { echo "run.sh: /dev/fuse is missing: FUSE mounts are impossible here" >&2; exit 1; }
FLASHDIR_PACKAGES+=(git tar findutils python3 dpkg-dev)
ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build" daemon/flashdir bench/slowstore/slowstore >/dev/null
export FLASHDIR="$FLASHDIR_ROOT/build/daemon/flashdir"
export SLOWSTORE="$FLASHDIR_ROOT/build/bench/slowstore/slowstore"

if [ "${1:-}" = "--writes" ]; then
  shift
  source "$here/../lib.sh"
  ensure_deb_src
  export PASSTHROUGH_HP="$(build_passthrough_hp)"  # the FUSE layer alone, for reference
  exec python3 "$here/writes.py" "$@"   # it makes and removes its own work directory
fi

work="$(mktemp -d "${FLASHDIR_BENCH_DIR:-/dev/shm}/slowstore-bench-XXXXXX")"
# run.py unmounts what it mounted; this is for when it could not (killed, say): flashdir's mount
# first, as it stands on slowstore's.
trap 'remove_bench_work "$work" "$work/fast" "$work/slow"' EXIT
python3 "$here/run.py" --work "$work" "$@"
