# Shared set-up for scripts/test.sh and scripts/demo.sh (sourced, not run).
# Installs missing Debian packages and configures meson build directories on first use.

FLASHDIR_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

FLASHDIR_PACKAGES=(
  g++ meson ninja-build pkg-config
  libfuse3-dev fuse3 librocksdb-dev libxxhash-dev catch2 libcli11-dev libspdlog-dev libfmt-dev
  nlohmann-json3-dev libabsl-dev libbenchmark-dev fio gnuplot-nox util-linux help2man
)

# Installs whatever of FLASHDIR_PACKAGES is missing. Idempotent: does nothing (not even
# `apt-get update`) when everything is there.
ensure_packages() {
  local missing=()
  local pkg
  for pkg in "${FLASHDIR_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# configure_build DIR [meson options...]: sets up DIR unless it is already configured.
configure_build() {
  local dir="$1"
  shift
  if [ ! -f "$FLASHDIR_ROOT/$dir/build.ninja" ]; then
    meson setup "$FLASHDIR_ROOT/$dir" "$FLASHDIR_ROOT" "$@"
  fi
}

# Optimised with assertions on; warnings are errors.
configure_release() { configure_build build --buildtype=release -Db_ndebug=false -Dwerror=true; }
# The sanitizer builds: -O1 (what the sanitizers recommend) and -g1 (line tables, enough for
# their reports' stack traces) compile in half the time of -O2 -g, most of the test command's.
sanitizer_build_options=(-Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 -Db_lundef=false -Dwerror=true)
# AddressSanitizer + UndefinedBehaviorSanitizer.
configure_asan() { configure_build build-asan "${sanitizer_build_options[@]}" -Db_sanitize=address,undefined; }
# ThreadSanitizer, for the multi-threaded suites only (scripts/test.sh builds just their targets).
configure_tsan() { configure_build build-tsan "${sanitizer_build_options[@]}" -Db_sanitize=thread; }

# process_running PID: whether PID is a process that has not ended (a zombie has).
process_running() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]; }

# Benchmarks: unmounts each mount point given, in order (found in /proc/mounts: mountpoint(1)
# cannot stat the mount of a dead daemon), waits for the daemons to end (the flashdir daemons
# whose caches are WORK/cache*, named by their daemon.lock, and the processes whose pids are in
# WORK/*.pid files: daemons a runner started in the foreground), kills one still running 10 s
# after its unmount (if its command line names WORK: a pid is never taken for another
# process's), and removes WORK (their EXIT trap).
remove_bench_work() {
  local work="$1" m pid file
  shift
  for m in "$@"; do
    if awk -v m="$m" '$2 == m { found = 1 } END { exit !found }' /proc/mounts; then
      fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" || true
    fi
  done
  for file in "$work"/cache*/daemon.lock "$work"/*.pid; do
    [ -f "$file" ] || continue
    pid="$(cut -d' ' -f1 "$file" 2>/dev/null || true)"
    [ -n "$pid" ] || continue
    for _ in $(seq 100); do process_running "$pid" || break; sleep 0.1; done
    if process_running "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$work"; then
      echo "remove_bench_work: process $pid ($file) still runs 10 s after its unmount: killing it" >&2
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
