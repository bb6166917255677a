#!/usr/bin/env bash
# The fio matrix of issue 20, one runner, one run: fio through flashdir (write-through and
# write-back, hit- and miss-dominated) against libfuse's passthrough_hp and the backing directory
# over a fast local backing (tmpfs), and against slowstore (1 ms a call) over the slow store;
# 4 KiB random and 1 MiB sequential reads and writes and 4 KiB random 70/30 reads and writes,
# 1 to 8 jobs. matrix.py says what each point measures and how it is checked.
#
# On a fresh Debian machine (as root, or with sudo) it installs what is missing (the build's
# packages, fio and gnuplot among them, dpkg-dev), adds a deb-src entry for the release if apt
# has none, builds flashdir, slowstore and passthrough_hp, then runs bench/fio/matrix.py in a
# work directory whose mounts come down in every outcome (matrix.py's own unmounts, and this
# trap for when it could not: killed, say).
#
#   bench/fio/run.sh [matrix.py options]     e.g. --quick, --rounds 3, --seconds 5, --part fast,
#                                            --jobs 1,4; bench/fio/run.sh --help
# Env: FLASHDIR_BENCH_DIR (/dev/shm): where the backing directories, the caches and the mounts
# live. About 12 minutes with the defaults (--quick: about 5). Writes bench/fio/results.md, the
# plots (fast.png, fast-backing.png, slow.png) and their data (*.dat).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "${1:-}" in
  -h | --help) exec python3 "$here/matrix.py" --help ;;
esac
source "$here/../../scripts/setup.sh"
source "$here/../lib.sh"

[ -c /dev/fuse ] || { echo "run.sh: /dev/fuse is missing: FUSE mounts are impossible here" >&2; exit 1; }
FLASHDIR_PACKAGES+=(dpkg-dev python3)
ensure_packages
ensure_deb_src
configure_release
ninja -C "$FLASHDIR_ROOT/build" daemon/flashdir bench/slowstore/slowstore >/dev/null
export FLASHDIR="$FLASHDIR_ROOT/build/daemon/flashdir"
export SLOWSTORE="$FLASHDIR_ROOT/build/bench/slowstore/slowstore"
PASSTHROUGH_HP="$(build_passthrough_hp)"
export PASSTHROUGH_HP

work="$(mktemp -d "${FLASHDIR_BENCH_DIR:-/dev/shm}/fio-matrix-XXXXXX")"
# The mounts are found when the trap runs: matrix.py makes them, flashdir's over slowstore's.
trap 'remove_bench_work "$work" $(mounts_under "$work")' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
python3 "$here/matrix.py" --work "$work" "$@"
left="$(mounts_under "$work")"
[ -z "$left" ] || { echo "run.sh: matrix.py left mounts behind: $left" >&2; exit 1; }
