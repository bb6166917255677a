// Where a mount's cache lives and how the daemon takes it: the default location (one cache per
// backing directory under the user's cache directory), creation on first use with mkfs's
// defaults and `size=`, and the lock that keeps a second daemon away. (Which backing directory
// a cache belongs to is recorded in its catalog and checked by the engine: doc/daemon.md.) No
// libfuse here.
#pragma once

#include <filesystem>
#include <string>

#include "flashdir/file_io.h"
#include "flashdir/format.h"
#include "flashdir/status.h"
#include "fs/mount_options.h"

namespace flashdir::fs {

// ${XDG_CACHE_HOME:-$HOME/.cache}/flashdir/<backing's last component>-<16 hex digits of a hash
// of the backing's canonical path>; fails if neither variable is set.
Result<std::filesystem::path> default_cache_dir(const std::filesystem::path& canonical_backing);

// A cache directory ready for the engine: it exists (created if it was missing or empty), is
// mode 0700, and this process holds its lock until the object is destroyed.
struct TakenCache {
  std::filesystem::path dir;
  format::Superblock superblock;
  bool created = false;      // formatted by this mount
  UniqueFd lock;             // DIR/daemon.lock, flock()ed exclusively
};

// Refusals, each one line: the lock is held by another daemon (its pid named), the directory is
// not a cache and not empty, the options for a new cache are refused by mkfs's checks, or the
// host's I/O fails.
Result<TakenCache> take_cache(const MountOptions& options, const std::filesystem::path& canonical_backing);

// The name of the lock file inside a cache directory.
inline constexpr const char* kLockFileName = "daemon.lock";

}  // namespace flashdir::fs
