#include "catalog_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <system_error>

#include "flashdir/catalog.h"
#include "flashdir/file_io.h"

namespace flashdir {
namespace {

struct Judgement {
  std::string unusable;      // why nothing in the catalog can be trusted; empty if it can
  std::string copy_problem;  // what is wrong with its copy of the superblock, if that is all
};

Judgement judge(const CacheDirPaths& paths, const format::Superblock& sb) {
  std::error_code ec;
  if (!std::filesystem::exists(paths.catalog, ec)) return {fmt::format("the catalog {} is missing", paths.catalog.string()), {}};
  auto catalog = Catalog::open(paths.catalog, Catalog::Access::read_only);
  if (!catalog.is_ok()) return {fmt::format("the catalog cannot be opened ({})", catalog.status().message()), {}};
  if (auto files = (*catalog)->all_files(); !files.is_ok())
    return {fmt::format("the catalog's file records cannot be read ({})", files.status().message()), {}};
  if (auto next = (*catalog)->next_file_id(); !next.is_ok())
    return {fmt::format("the catalog's next file id cannot be read ({})", next.status().message()), {}};
  auto copy = (*catalog)->superblock_copy();
  if (copy.is_ok() && copy->uuid != sb.uuid) {
    return {fmt::format("the catalog belongs to another cache: its copy of the superblock names cache {} ({}), and "
                        "this cache is {} ({})",
                        copy->uuid.to_string(), copy->geometry.describe(), sb.uuid.to_string(), sb.geometry.describe()),
            {}};
  }
  if (copy.status().code() == StatusCode::not_found) return {{}, "the catalog has no copy of the superblock (it lost records)"};
  if (!copy.is_ok()) return {{}, fmt::format("the catalog's copy of the superblock is damaged ({})", copy.status().message())};
  if (copy->geometry != sb.geometry) {
    return {{}, fmt::format("the catalog's copy of the superblock has geometry {}, the superblock {}",
                            copy->geometry.describe(), sb.geometry.describe())};
  }
  return {};
}

Status write_note(const std::filesystem::path& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return errno_status(fmt::format("creating {}", path.string()));
  FLASHDIR_TRY(pwrite_all(fd.get(), ConstByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), 0,
                          path.string()));
  if (::fsync(fd.get()) != 0) return errno_status(fmt::format("syncing {}", path.string()));
  return Status::ok();
}

// Moves the catalog into lost+found under a name no earlier one has; returns that name.
Result<std::string> keep_in_lost_found(const CacheDirPaths& paths, const std::string& why) {
  const std::filesystem::path lost_found = paths.dir / kLostFoundDirName;
  if (::mkdir(lost_found.c_str(), 0700) != 0 && errno != EEXIST)
    return errno_status(fmt::format("creating {}", lost_found.string()));
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const std::string base = fmt::format("{}{:%Y%m%d-%H%M%S}", kReplacedCatalogPrefix, now);
  std::string name = base;
  std::error_code ec;
  for (int attempt = 1; std::filesystem::exists(lost_found / name, ec) ||
                        std::filesystem::exists(lost_found / (name + ".txt"), ec);
       ++attempt) {
    name = fmt::format("{}.{}", base, attempt);
  }
  if (::rename(paths.catalog.c_str(), (lost_found / name).c_str()) != 0)
    return errno_status(fmt::format("moving {} to {}", paths.catalog.string(), (lost_found / name).string()));
  FLASHDIR_TRY(write_note(lost_found / (name + ".txt"),
                          fmt::format("the catalog fsck.flashdir -y replaced with an empty one\nwhy: {}\nreplaced: "
                                      "{:%Y-%m-%d %H:%M:%S} UTC\nit is a RocksDB database; nothing of the cache uses "
                                      "it any more: delete it once nothing in it is wanted\n",
                                      why, now)));
  FLASHDIR_TRY(sync_directory(lost_found));
  return name;
}

}  // namespace

std::string unusable_catalog_error(const CacheDirPaths& paths, const std::string& why) {
  std::error_code ec;
  return fmt::format(
      "{}: nothing names the files the cache's pages belong to. fsck -y replaces it with an empty catalog bound to "
      "this cache: the clean pages are dropped (the backing files hold their bytes), the dirty pages saved in "
      "CACHE/{}{}",
      why, kLostFoundDirName, std::filesystem::exists(paths.catalog, ec) ? ", and the old catalog kept there" : "");
}

void check_catalog(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report, CheckState& state) {
  const Judgement found = judge(paths, report.superblock);
  if (!found.unusable.empty()) {
    state.catalog_unusable = found.unusable;
    // -y replaces it once the cache check has saved the dirty pages, and says so then.
    if (!options.repair) report.errors.push_back(unusable_catalog_error(paths, found.unusable));
    return;
  }
  if (found.copy_problem.empty()) return;
  if (!options.repair) {
    report.errors.push_back(fmt::format("{}: fsck -y rewrites it from the superblock", found.copy_problem));
    return;
  }
  auto catalog = Catalog::open(paths.catalog, Catalog::Access::read_write);
  const Status written = catalog.is_ok() ? (*catalog)->put_superblock_copy(report.superblock) : catalog.status();
  if (!written.is_ok()) {
    report.errors.push_back(fmt::format("{}; rewriting it failed: {}", found.copy_problem, written.message()));
  } else {
    report.repairs.push_back(fmt::format("{}; rewrote it from the superblock", found.copy_problem));
  }
}

Status replace_catalog(const CacheDirPaths& paths, const format::Superblock& superblock, const std::string& why,
                       std::uint64_t next_file_id, std::vector<std::string>& done) {
  std::error_code ec;
  if (std::filesystem::exists(paths.catalog, ec)) {
    auto kept = keep_in_lost_found(paths, why);
    if (!kept.is_ok()) return kept.status();
    done.push_back(fmt::format("kept the old catalog as CACHE/{}/{}", kLostFoundDirName, *kept));
  }
  {
    auto catalog = Catalog::create(paths.catalog);
    if (!catalog.is_ok()) return catalog.status();
    FLASHDIR_TRY((*catalog)->put_superblock_copy(superblock));
    FLASHDIR_TRY((*catalog)->skip_file_ids_to(next_file_id));
  }
  // RocksDB makes its directory as the umask lets it.
  if (::chmod(paths.catalog.c_str(), 0700) != 0) return errno_status(fmt::format("making {} private", paths.catalog.string()));
  FLASHDIR_TRY(sync_directory(paths.dir));
  done.push_back(fmt::format("created an empty catalog bound to this cache (file ids from {} on)", next_file_id));
  return Status::ok();
}

}  // namespace flashdir
