# Shared pieces of the FUSE benchmark runners (bench/fuse/run.sh, bench/workloads/run.sh,
# bench/fio/run.sh):
# sourced after scripts/setup.sh, not run.

# A deb-src entry for this release's main archive, unless apt already knows fuse3's source.
ensure_deb_src() {
  apt-cache showsrc fuse3 2>/dev/null | grep -q '^Package: fuse3$' && return 0
  local codename sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  codename="$(. /etc/os-release && echo "$VERSION_CODENAME")"
  echo "bench: adding a deb-src entry for $codename (/etc/apt/sources.list.d/flashdir-bench-src.sources)"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$codename" | "${sudo[@]}" tee /etc/apt/sources.list.d/flashdir-bench-src.sources >/dev/null
  "${sudo[@]}" apt-get update -q
}

# apt-get source needs the archive's source index, which Debian's images leave out: a deb-src
# twin of the system's Debian sources (deb822 format), once.
ensure_source_index() {
  apt-get indextargets --format '$(CREATED_BY)' | grep -qx Sources && return
  local system=/etc/apt/sources.list.d/debian.sources
  [ -r "$system" ] || { echo "no deb-src line for apt-get source, and no $system to derive one from" >&2; return 1; }
  sed 's/^Types: deb$/Types: deb-src/' "$system" > /etc/apt/sources.list.d/flashdir-deb-src.sources
  apt-get update -q >&2
}

# Builds libfuse's example/passthrough_hp from Debian's fuse3 source package (the same version
# as the libfuse3 flashdir links) into a directory outside the repository, once; prints the
# binary's path.
build_passthrough_hp() {
  local cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/flashdir-bench"
  local binary="$cache_dir/passthrough_hp"
  if [ ! -x "$binary" ]; then
    mkdir -p "$cache_dir/src"
    ensure_source_index
    ls -d "$cache_dir"/src/fuse3-*/example >/dev/null 2>&1 || (cd "$cache_dir/src" && apt-get source -q fuse3 >&2)
    local example_dir
    example_dir="$(ls -d "$cache_dir"/src/fuse3-*/example | head -n 1)"
    # The example compiles alone against the installed libfuse3; the HAVE_* macros are what
    # libfuse's own meson build defines on Linux.
    g++ -std=c++17 -O2 -Wall -DHAVE_SETXATTR -DHAVE_POSIX_FALLOCATE -DHAVE_UTIMENSAT \
      -I"$example_dir" "$example_dir/passthrough_hp.cc" -o "$binary.tmp" \
      $(pkg-config --cflags --libs fuse3) -lpthread >&2
    mv "$binary.tmp" "$binary"
  fi
  echo "$binary"
}

# is_mounted DIR: whether DIR is a mount point in /proc/mounts (mountpoint(1) cannot stat the
# mount of a dead daemon).
is_mounted() { awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/mounts; }

# wait_mounted DIR PID: waits up to 10 s for DIR to be mounted while PID runs; fails otherwise.
wait_mounted() {
  local dir="$1" pid="$2"
  for _ in $(seq 200); do
    is_mounted "$dir" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# cpu_seconds PID: user + system time of a process so far.
cpu_seconds() { awk -v tick="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / tick }' "/proc/$1/stat"; }

# mount_type DIR: the file system type /proc/mounts gives the mount at DIR ("" if none).
mount_type() { awk -v m="$1" '$2 == m { type = $3 } END { print type }' /proc/mounts; }

# start_fuse_daemon MOUNTPOINT FILES COMMAND...: runs a FUSE daemon that stays in the foreground
# (COMMAND) in the background, its output in FILES.log and its pid in FILES.pid (where
# remove_bench_work finds it), and waits for MOUNTPOINT to be mounted; prints the log and fails
# if it is not.
start_fuse_daemon() {
  local mountpoint="$1" files="$2"
  shift 2
  "$@" >"$files.log" 2>&1 </dev/null &
  echo $! >"$files.pid"
  wait_mounted "$mountpoint" "$!" || { cat "$files.log" >&2; return 1; }
}

# mount_slowstore SLOWSTORE BACKING MOUNTPOINT FILES [OPTIONS]: bench/slowstore's store
# (SLOWSTORE, the binary) of BACKING at MOUNTPOINT, in the foreground of a background process
# as start_fuse_daemon runs it, its call counts in FILES.counts.json at unmount; OPTIONS such as
# latency_us=1000 (bench/slowstore/slowstore_mount.py is the same for the Python runners).
mount_slowstore() {
  local binary="$1" backing="$2" mountpoint="$3" files="$4" options="${5:-}"
  start_fuse_daemon "$mountpoint" "$files" "$binary" "$backing" "$mountpoint" -f \
    -o "counts=$files.counts.json${options:+,$options}"
}

# unmount_and_wait MOUNTPOINT [PID]: unmounts MOUNTPOINT if it is mounted (fusermount3 -u, then
# -uz) and waits up to 60 s for its daemon PID to end (a write-back flashdir daemon writes back
# what is dirty after the unmount); says so if it did not (remove_bench_work then kills it).
unmount_and_wait() {
  local mountpoint="$1" pid="${2:-}"
  if is_mounted "$mountpoint"; then
    fusermount3 -u "$mountpoint" 2>/dev/null || fusermount3 -uz "$mountpoint" || true
  fi
  [ -n "$pid" ] || return 0
  for _ in $(seq 600); do process_running "$pid" || return 0; sleep 0.1; done
  echo "unmount_and_wait: the daemon of $mountpoint ($pid) still runs 60 s after its unmount" >&2
}

# mounts_under DIR: the mount points below DIR, the last mounted first (a mount made over another
# of them comes down before it), one a line: for remove_bench_work when a runner's driver mounts
# what the shell does not name.
mounts_under() {
  awk -v top="$1/" 'index($2, top) == 1 { points[n++] = $2 } END { for (i = n - 1; i >= 0; i--) print points[i] }' \
    /proc/mounts
}
