// Where a mount's cache lives and how the daemon takes it: the default location (one cache per
// backing directory under the user's cache directory; root's under /var/cache/flashdir), the
// trust check every cache directory passes (flashdir/trusted_dir.h), creation on first use
// with mkfs's defaults and `size=`, and the lock that keeps a second daemon away and waits for
// one that is closing. (Which backing directory a cache belongs to is recorded in its catalog
// and checked by the engine: doc/daemon.md.) No libfuse here.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "flashdir/cache_lock.h"
#include "flashdir/format.h"
#include "flashdir/status.h"
#include "flashdir/trusted_dir.h"
#include "fs/mount_options.h"

namespace flashdir::fs {

// <base>/flashdir/<backing's last component>-<16 hex digits of a hash of the backing's canonical
// path>, where <base> is /var/cache for root (euid 0) and ${XDG_CACHE_HOME:-$HOME/.cache} for
// anyone else; fails if neither variable is set. Root ignores both: under sudo they may still
// name a user's directory, where that user could prepare the cache root writes into.
Result<std::filesystem::path> default_cache_dir(const std::filesystem::path& canonical_backing, uid_t euid);

// A cache directory ready for the engine: it passed the trust check, exists (created if it was
// missing or empty), and this process holds its lock until the object is destroyed.
struct TakenCache {
  TrustedDir dir;  // dir.path is canonical
  CacheLock lock;  // DIR/daemon.lock, "starting"
  format::Superblock superblock;
  bool created = false;  // formatted by this mount
};

// Refusals, each one line: the directory fails the trust check or lies inside the backing
// tree (its image would be reachable through the mount), the lock is held by another process
// (its pid named; a daemon closing the cache is waited for, at most kCloseWait), the directory
// is neither a cache nor empty, the options for a new cache are refused by mkfs's checks, or
// the host's I/O fails. A refusal leaves nothing behind that this call created.
Result<TakenCache> take_cache(const MountOptions& options, const std::filesystem::path& canonical_backing);

// How long a starting daemon waits for one that is closing the cache (the unmount came first).
inline constexpr std::chrono::seconds kCloseWait{30};

// True if `path` is `dir` or lies below it; both canonical.
bool is_within(const std::filesystem::path& path, const std::filesystem::path& dir);

}  // namespace flashdir::fs
