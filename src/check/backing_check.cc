#include "backing_check.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <optional>
#include <system_error>

#include "bounded_list.h"
#include "flashdir/cache_dir.h"

namespace flashdir {
namespace {

// The attributes of the regular file at `path` as the engine records them (device relative to
// `root_device`); nullopt if there is none.
std::optional<BackingAttributes> attributes_at(const std::filesystem::path& path, dev_t root_device) {
  struct statx st {};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) != 0 ||
      !S_ISREG(st.stx_mode))
    return std::nullopt;
  BackingAttributes now;
  const dev_t device = makedev(st.stx_dev_major, st.stx_dev_minor);
  now.device = device == root_device ? 0 : device;
  now.inode = st.stx_ino;
  now.birth_ns = (st.stx_mask & STATX_BTIME) != 0
                     ? static_cast<std::int64_t>(st.stx_btime.tv_sec) * 1'000'000'000 + st.stx_btime.tv_nsec
                     : 0;
  now.uid = st.stx_uid;
  now.gid = st.stx_gid;
  return now;
}

}  // namespace

void check_backing_files(const std::filesystem::path& root, IdentityRule rule, const CatalogFiles& files,
                         const std::map<std::uint64_t, std::uint64_t>& dirty_slots, const CheckOptions& options,
                         CheckReport& report) {
  std::error_code error;
  struct stat root_stat {};
  if (!std::filesystem::is_directory(root, error) || ::stat(root.c_str(), &root_stat) != 0) {
    report.notes.push_back(
        fmt::format("the backing directory {} is not reachable: the catalog's files were not checked", root.string()));
    return;
  }
  report.cache.backing_checked = true;
  std::map<std::string, std::uint64_t> missing;  // path -> file id, sorted for the listing
  for (const auto& [id, file] : files) {
    const auto now = attributes_at(root / file.relative_path, root_stat.st_dev);
    if (!now) {
      missing.emplace(file.relative_path, id);
      continue;
    }
    const auto dirty = dirty_slots.find(id);
    if (dirty != dirty_slots.end() && !file.attributes.proves_same_file(*now, rule)) {
      report.errors.push_back(fmt::format(
          "{} dirty pages of {} (file id {}, owner uid {}) wait to be written back, and {} is now another file "
          "(inode {}, owner uid {}; recorded: inode {}): the engine's next open keeps them in {}/{} for you to look at",
          dirty->second, file.relative_path, id, file.attributes.uid, (root / file.relative_path).string(), now->inode,
          now->uid, file.attributes.inode, "CACHE", kLostFoundDirName));
    }
  }
  report.cache.missing_backing_files = missing.size();
  std::size_t listed = 0;
  for (const auto& [path, id] : missing) {
    const auto dirty = dirty_slots.find(id);
    if (dirty != dirty_slots.end()) {
      report.errors.push_back(fmt::format(
          "{} dirty pages of {} (file id {}) wait to be written back, and its backing file {} is gone: restore it (or "
          "mount the backing directory) before the engine's next open, which otherwise keeps them in CACHE/{}",
          dirty->second, path, id, (root / path).string(), kLostFoundDirName));
    } else {
      list(report.notes, listed, options.max_listed_pages,
           fmt::format("the backing file of {} (file id {}) is gone: its cached pages are never served and leave by "
                       "eviction",
                       path, id));
    }
  }
  if (listed > options.max_listed_pages)
    report.notes.push_back(fmt::format("... and {} more catalog files whose backing file is gone", listed - options.max_listed_pages));
}

}  // namespace flashdir
