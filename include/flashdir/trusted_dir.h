// A cache directory trusts no one but the user who runs the tool, as ssh's StrictModes trusts
// a user's keys (DESIGN.md, "Identity and trust"): it holds copies of files the backing
// directory may protect, and the daemon, often root, writes where its files point. The one
// check, for the daemon, mkfs.flashdir and fsck.flashdir.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "flashdir/file_io.h"
#include "flashdir/status.h"

namespace flashdir {

enum class TrustPolicy {
  // Refuse what fails the check (the daemon, mkfs, fsck -y). A cache directory other users may
  // read but not write passes: make_private() closes it once the caller takes it.
  enforce,
  // Report it as a warning and go on (fsck -n: a read-only check changes nothing).
  warn,
};

enum class CreateDirs {
  none,  // the directory must exist
  last,  // its parent must exist (mkfs.flashdir DIR)
  all,   // every missing level is made (the daemon's cache= and default location)
};

// A cache directory that passed the check, opened along the path it checked.
struct TrustedDir {
  std::filesystem::path path;                  // canonical
  UniqueFd fd;                                 // O_PATH, for openat()
  std::vector<std::filesystem::path> created;  // directories this open made (mode 0700), outermost first
  std::set<std::string> found;                 // the names it held when opened
  std::vector<std::string> warnings;           // a mode made private; with TrustPolicy::warn, what enforce refuses
};

// Opens `dir` (canonicalised first), walking from / one level at a time without following a
// link, and checks:
// - every directory above it is owned by root or by this user, and not writable by group or
//   others unless sticky (/tmp): nobody else can rename the cache away and put another there;
// - the directory itself is owned by this user and not writable by group or others;
// - its entries flashdir opens (superblock, nand.img, catalog/, restart.img, daemon.lock, daemon.log), where
//   present, are real files (catalog/ a real directory), not links, owned by this user, with one
//   name, not writable by group or others. RocksDB opens the catalog's files by path: this
//   check is what protects them.
// Refusals are one line: what is wrong, why it matters, how to fix it. Directories it creates are
// 0700 whatever the umask.
Result<TrustedDir> open_trusted_dir(const std::filesystem::path& dir, TrustPolicy policy, CreateDirs create);

// Makes a directory other users may read owner-only (mode & 0700), with a warning in
// `dir.warnings`: nobody else could write in it, so what it holds is the owner's. Called once
// the directory is taken as a cache, never for one refused for what it holds.
Status make_private(TrustedDir& dir);

// Opens `name` in `dir` without following a link (openat, O_NOFOLLOW, O_CLOEXEC added to
// `flags`); a file it creates is 0600 whatever the umask. A link is refused with a message.
Result<UniqueFd> open_in_dir(const TrustedDir& dir, const std::string& name, int flags);

// Undoes a start that failed, so that it leaves nothing behind it made: removes the directory
// if open_trusted_dir made it (with everything in it, then its new parents while empty), else
// every entry that was not in it when it was opened. Nothing that existed before is touched.
void remove_created(const TrustedDir& dir);

}  // namespace flashdir
