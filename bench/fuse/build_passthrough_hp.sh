#!/usr/bin/env bash
# Builds libfuse's example/passthrough_hp from Debian's fuse3 source package (the same 3.14
# that flashdir links) into a cache directory outside the repository, and prints the path of
# the binary. Nothing of it is committed. Needs a deb-src entry for bookworm (see
# bench/README.md) and dpkg-dev; reuses an earlier build.
#
#   bench/fuse/build_passthrough_hp.sh [CACHE_DIR]   (default: ${XDG_CACHE_HOME:-~/.cache}/flashdir-bench)
set -euo pipefail

cache_dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/flashdir-bench}"
binary="$cache_dir/passthrough_hp"
if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi
mkdir -p "$cache_dir/src"
if ! ls -d "$cache_dir"/src/fuse3-*/example >/dev/null 2>&1; then
  (cd "$cache_dir/src" && apt-get source fuse3 >&2) || {
    echo "build_passthrough_hp: 'apt-get source fuse3' failed; add a deb-src line (bench/README.md)" >&2
    exit 1
  }
fi
example_dir="$(ls -d "$cache_dir"/src/fuse3-*/example | head -n 1)"
# The example compiles alone against the installed libfuse3; the HAVE_* macros are what
# libfuse's own meson build defines on Linux.
g++ -std=c++17 -O2 -Wall -DHAVE_SETXATTR -DHAVE_POSIX_FALLOCATE -DHAVE_UTIMENSAT \
  -I"$example_dir" "$example_dir/passthrough_hp.cc" -o "$binary.tmp" \
  $(pkg-config --cflags --libs fuse3) -lpthread >&2
mv "$binary.tmp" "$binary"
echo "$binary"
