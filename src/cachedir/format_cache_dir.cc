#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <fmt/format.h>
#include <system_error>

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
      catalog(cache_dir / "catalog") {}

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

bool holds_cache_entries(const CacheDirPaths& paths) {
  std::error_code ec;
  return fs::exists(paths.superblock, ec) || fs::exists(paths.image, ec) || fs::exists(paths.catalog, ec);
}

// Creates `dir` if needed and makes sure it may be formatted; returns nothing on success.
Status prepare_directory(const CacheDirPaths& paths, bool force) {
  std::error_code ec;
  const fs::path& dir = paths.dir;
  if (dir.empty()) return Status::invalid_argument("the cache directory path is empty");
  if (!fs::exists(dir, ec)) {
    if (!fs::create_directory(dir, ec)) {
      return Status::io_error(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
    }
  } else if (!fs::is_directory(dir, ec)) {
    return Status::invalid_argument(fmt::format("{} exists and is not a directory", dir.string()));
  } else if (holds_cache_entries(paths)) {
    if (!force) {
      return Status::already_exists(
          fmt::format("{} already holds a flashdir cache (use --force to replace it)", dir.string()));
    }
  } else if (!fs::is_empty(dir, ec) && !force) {
    return Status::already_exists(
        fmt::format("{} is not empty and holds no flashdir cache (use --force to format it anyway)", dir.string()));
  }

  // access(2) says yes to root everywhere; creating a file is the only honest test.
  const fs::path probe = dir / ".mkfs.flashdir-probe";
  UniqueFd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) return errno_status(fmt::format("{} is not writable", dir.string()));
  fd = UniqueFd();
  fs::remove(probe, ec);

  if (force) {
    // The superblock goes first: without it the rest is not a cache, whatever happens next.
    for (const fs::path& entry : {paths.superblock, paths.image, paths.catalog}) {
      fs::remove_all(entry, ec);
      if (ec) return Status::io_error(fmt::format("cannot remove {}: {}", entry.string(), ec.message()));
    }
    FLASHDIR_TRY(sync_directory(dir));
  }
  return Status::ok();
}

}  // namespace

Result<format::Superblock> format_cache_dir(const fs::path& dir, const FormatOptions& options) {
  auto geometry = options.checked_geometry();
  if (!geometry.is_ok()) return geometry.status();
  const CacheDirPaths paths(dir);
  FLASHDIR_TRY(prepare_directory(paths, options.force));

  format::Superblock sb;
  sb.uuid = format::Uuid::random();
  sb.geometry = geometry.value();
  sb.latency = options.latency;
  sb.mapping_scheme = options.mapping;
  sb.gc_policy = options.gc;
  sb.overprovision_permille = options.overprovision_permille;
  sb.ram_budget_bytes = options.ram_budget_bytes;
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
  {
    auto image = create_image_store(paths.image, sb.geometry, sb.uuid);
    if (!image.is_ok()) return image.status();
    SimClock clock;
    SimulatedChip chip(image.value(), LatencyProfile::of(LatencyPreset::zero), clock);
    auto ftl = Ftl::format(chip, clock, ftl_options(sb));
    if (!ftl.is_ok()) return ftl.status().with_context("formatting the FTL");
    FLASHDIR_TRY((*ftl)->close());
  }
  FLASHDIR_TRY(write_superblock_file(paths.superblock, sb));
  FLASHDIR_TRY(sync_directory(dir));
  return sb;
}

}  // namespace flashdir
