#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <fmt/format.h>
#include <system_error>

#include <algorithm>

#include "flashdir/cache_dir.h"
#include "flashdir/catalog.h"
#include "flashdir/file_io.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"

namespace flashdir {

namespace fs = std::filesystem;

CacheDirPaths::CacheDirPaths(const fs::path& cache_dir)
    : dir(cache_dir),
      superblock(cache_dir / "superblock"),
      image(cache_dir / "nand.img"),
      catalog(cache_dir / "catalog"),
      restart_image(cache_dir / "restart.img") {}

std::uint64_t default_ram_budget_bytes(std::uint64_t capacity_bytes) {
  return std::clamp<std::uint64_t>(capacity_bytes / 16, 4ULL << 20, 64ULL << 20);
}

FtlOptions ftl_options(const format::Superblock& sb) {
  FtlOptions options;
  options.mapping = sb.mapping_scheme;
  options.gc = sb.gc_policy;
  options.overprovision_permille = sb.overprovision_permille;
  options.ram.policy = sb.ram_policy;
  options.ram.static_mapping_percent = sb.static_mapping_percent;
  options.ram.budget_bytes = sb.ram_budget_bytes;
  return options;
}

namespace {

// What a directory holds, sorted for the decision to format it.
struct Contents {
  bool superblock = false;  // a cache
  bool parts = false;       // image or catalog of what an interrupted first start left
  std::string foreign;      // the first entry of something else
};

// An image or catalog without a superblock is part of a cache only where a flashdir start has
// been: it takes the lock before it formats. Without the lock, a catalog/ is somebody's own.
Result<Contents> contents_of(const TrustedDir& dir, const CacheDirPaths& paths) {
  Contents contents;
  const bool started_before = dir.found.count(kLockFileName) != 0;
  std::string first_part;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(paths.dir, ec)) {
    const fs::path& path = entry.path();
    const std::string name = path.filename().string();
    if (path == paths.superblock) {
      contents.superblock = true;
    } else if (path == paths.image || path == paths.catalog || path == paths.restart_image) {
      contents.parts = true;
      if (first_part.empty()) first_part = name;
    } else if (name != kLockFileName && name != kLogFileName && contents.foreign.empty()) {
      contents.foreign = name;
    }
  }
  if (ec) return Status::io_error(fmt::format("listing {}: {}", paths.dir.string(), ec.message()));
  if (!contents.superblock && contents.parts && !started_before && contents.foreign.empty()) contents.foreign = first_part;
  return contents;
}

// Makes sure `dir` may be formatted, and with `force` removes the cache it holds.
Status prepare_directory(const TrustedDir& dir, const CacheDirPaths& paths, bool force) {
  auto contents = contents_of(dir, paths);
  if (!contents.is_ok()) return contents.status();
  // --force means "replace the cache": a directory holding anything else is somebody's data.
  if (!contents->superblock && !contents->foreign.empty()) {
    return Status::already_exists(fmt::format(
        "{} is neither a flashdir cache nor empty (it holds {}); flashdir formats an empty directory, and --force "
        "replaces only a flashdir cache",
        dir.path.string(), contents->foreign));
  }
  if (contents->superblock && !force) {
    return Status::already_exists(
        fmt::format("{} already holds a flashdir cache (use --force to replace it)", dir.path.string()));
  }
  if (contents->parts && !force) {
    return Status::already_exists(fmt::format(
        "{} holds part of a flashdir cache without a superblock (use --force to replace it)", dir.path.string()));
  }

  // access(2) says yes to root everywhere; creating a file is the only honest test.
  const char* probe = ".mkfs.flashdir-probe";
  UniqueFd fd(::openat(dir.fd.get(), probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) return errno_status(fmt::format("{} is not writable", dir.path.string()));
  fd = UniqueFd();
  ::unlinkat(dir.fd.get(), probe, 0);

  if (force) {
    // The superblock goes first: without it the rest is not a cache, whatever happens next.
    std::error_code ec;
    for (const fs::path& entry : {paths.superblock, paths.image, paths.catalog, paths.restart_image}) {
      fs::remove_all(entry, ec);
      if (ec) return Status::io_error(fmt::format("cannot remove {}: {}", entry.string(), ec.message()));
    }
    FLASHDIR_TRY(sync_directory(dir.path));
  }
  return Status::ok();
}

}  // namespace

Result<format::Superblock> format_locked_cache_dir(const TrustedDir& dir, const CacheLock&,
                                                   const FormatOptions& options) {
  auto geometry = options.checked_geometry();
  if (!geometry.is_ok()) return geometry.status();
  const CacheDirPaths paths(dir.path);
  FLASHDIR_TRY(prepare_directory(dir, paths, options.force));

  format::Superblock sb;
  sb.uuid = format::Uuid::random();
  sb.geometry = geometry.value();
  sb.latency = options.latency;
  sb.mapping_scheme = options.mapping;
  sb.gc_policy = options.gc;
  sb.overprovision_permille = options.overprovision_for(*geometry);
  sb.ram_budget_bytes = options.ram_budget_bytes.value_or(default_ram_budget_bytes(options.capacity_bytes));
  sb.ram_policy = options.ram_policy;
  sb.static_mapping_percent = options.static_mapping_percent;
  sb.clean_shutdown = true;
  sb.sequence = 1;
  sb.created_unix_s = static_cast<std::uint64_t>(std::time(nullptr));

  {
    auto catalog = Catalog::create(paths.catalog);
    if (!catalog.is_ok()) return catalog.status();
    FLASHDIR_TRY((*catalog)->put_superblock_copy(sb));
  }
  // RocksDB makes its directory as the umask lets it.
  if (::fchmodat(dir.fd.get(), paths.catalog.filename().c_str(), 0700, 0) != 0)
    return errno_status(fmt::format("making {} private", paths.catalog.string()));
  {
    auto image = create_image_store(paths.image, sb.geometry, sb.uuid, options.image_space);
    if (!image.is_ok()) return image.status();
    SimClock clock;
    SimulatedChip chip(image.value(), LatencyProfile::of(LatencyPreset::zero), clock);
    auto ftl = Ftl::format(chip, clock, ftl_options(sb));
    if (!ftl.is_ok()) return ftl.status().with_context("formatting the FTL");
    FLASHDIR_TRY((*ftl)->close());
  }
  FLASHDIR_TRY(write_superblock_file(paths.superblock, sb));
  FLASHDIR_TRY(sync_directory(dir.path));
  return sb;
}

Result<FormattedCacheDir> format_cache_dir(const fs::path& dir, const FormatOptions& options) {
  auto trusted = open_trusted_dir(dir, TrustPolicy::enforce, CreateDirs::last);
  if (!trusted.is_ok()) return trusted.status();
  // The daemon's lock: a cache a daemon serves (or fsck repairs) is not formatted under it.
  LockRequest request;
  request.program = "mkfs.flashdir";
  request.state = "formatting";
  auto lock = lock_cache_dir(*trusted, request);
  auto formatted = lock.is_ok() ? format_locked_cache_dir(*trusted, *lock, options) : lock.status();
  const Status made_private = formatted.is_ok() ? make_private(*trusted) : formatted.status();
  if (!made_private.is_ok()) {
    remove_created(*trusted);
    return made_private;
  }
  return FormattedCacheDir{formatted.value(), std::move(trusted->warnings)};
}

}  // namespace flashdir
