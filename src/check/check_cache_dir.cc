#include <fmt/format.h>
#include <memory>
#include <system_error>

#include "chip_scan.h"
#include "ftl_check.h"
#include "flashdir/cache_dir.h"
#include "flashdir/catalog.h"
#include "flashdir/check.h"
#include "flashdir/clock.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"

namespace flashdir {

int CheckReport::exit_code() const {
  if (!fatal.empty()) return 8 | (errors.empty() ? 0 : 4);
  return (repairs.empty() ? 0 : 1) | (errors.empty() ? 0 : 4);
}

namespace {

void check_superblock(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report) {
  std::error_code ec;
  if (paths.dir.empty()) {
    report.fatal = "the cache directory path is empty";
    return;
  }
  if (!std::filesystem::is_directory(paths.dir, ec)) {
    report.fatal = fmt::format("{} is not a directory", paths.dir.string());
    return;
  }
  auto file = read_superblock_file(paths.superblock);
  if (!file.is_ok()) {
    report.fatal = fmt::format("cannot read the superblock: {}", file.status().message());
    return;
  }
  report.have_superblock = true;
  report.superblock = file->superblock;
  for (const auto& damage : file->damaged) {
    if (!options.repair) {
      report.errors.push_back(fmt::format("{} (the other slot is intact)", damage));
      continue;
    }
    if (Status s = write_superblock_file(paths.superblock, file->superblock); !s.is_ok()) {
      report.errors.push_back(fmt::format("{}; rewriting it failed: {}", damage, s.message()));
    } else {
      report.repairs.push_back(fmt::format("{}; rewrote it from slot {}", damage, file->slot));
    }
  }
}

void check_catalog(const CacheDirPaths& paths, CheckReport& report) {
  auto catalog = Catalog::open(paths.catalog, Catalog::Access::read_only);
  if (!catalog.is_ok()) {
    report.errors.push_back(fmt::format("catalog: {}", catalog.status().message()));
    return;
  }
  auto copy = (*catalog)->superblock_copy();
  if (!copy.is_ok()) {
    report.errors.push_back(fmt::format("catalog: {}", copy.status().message()));
  } else if (copy->uuid != report.superblock.uuid || copy->geometry != report.superblock.geometry) {
    report.errors.push_back(fmt::format("catalog belongs to cache {} ({}), the superblock to {} ({})",
                                        copy->uuid.to_string(), copy->geometry.describe(),
                                        report.superblock.uuid.to_string(),
                                        report.superblock.geometry.describe()));
  }
}

void check_chip(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report) {
  auto header = read_image_header(paths.image);
  if (!header.is_ok()) {
    report.fatal = fmt::format("cannot use the chip image: {}", header.status().message());
    return;
  }
  if (header->uuid != report.superblock.uuid) {
    report.fatal = fmt::format("image {} belongs to cache {}, the superblock to {}", paths.image.string(),
                               header->uuid.to_string(), report.superblock.uuid.to_string());
    return;
  }
  if (header->geometry != report.superblock.geometry) {
    report.fatal = fmt::format("image geometry ({}) differs from the superblock's ({})",
                               header->geometry.describe(), report.superblock.geometry.describe());
    return;
  }
  const std::size_t errors_before = report.errors.size();
  bool needs_rebuild = false;
  {
    auto store = open_image_store(paths.image, ImageAccess::read_only);
    if (!store.is_ok()) {
      report.fatal = fmt::format("cannot use the chip image: {}", store.status().message());
      return;
    }
    SimClock clock;
    SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
    // Damaged pages are what power cuts leave behind; they are errors only if the mapping
    // refers to them, which check_ftl finds.
    std::size_t listed = 0;
    auto damaged = [&](Ppn page, const std::string& why) {
      if (listed++ >= options.max_listed_pages) return;
      const Geometry& g = chip.geometry();
      report.notes.push_back(fmt::format("damaged page {} (block {}, page {}): {}", page.value,
                                         g.block_of(page).value, g.page_in_block(page), why));
    };
    if (Status s = scan_chip(chip, report.chip, damaged, options.progress); !s.is_ok()) {
      report.fatal = fmt::format("chip scan stopped: {}", s.message());
      return;
    }
    if (report.chip.damaged_pages > options.max_listed_pages) {
      report.notes.push_back(fmt::format("... and {} more damaged pages",
                                         report.chip.damaged_pages - options.max_listed_pages));
    }
    needs_rebuild = check_ftl(chip, report.superblock, options, report);
  }
  if (!needs_rebuild || !options.repair) return;

  // fsck -y: replace the FTL state with one rebuilt from a scan of every page.
  auto writable = open_image_store(paths.image, ImageAccess::read_write);
  if (!writable.is_ok()) {
    report.errors.push_back(fmt::format("cannot open the image to repair it: {}", writable.status().message()));
    return;
  }
  SimClock clock;
  SimulatedChip chip(writable.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  if (Status s = rebuild_ftl(chip, report.superblock); !s.is_ok()) {
    report.errors.push_back(fmt::format("rebuilding the FTL from a full scan failed: {}", s.message()));
    return;
  }
  for (auto it = report.errors.begin() + static_cast<std::ptrdiff_t>(errors_before); it != report.errors.end(); ++it) {
    report.repairs.push_back(*it);
  }
  report.errors.resize(errors_before);
  report.repairs.push_back("rebuilt the FTL mapping from a scan of every page and wrote a fresh checkpoint");
}

}  // namespace

CheckReport check_cache_dir(const std::filesystem::path& dir, const CheckOptions& options) {
  const CacheDirPaths paths(dir);
  CheckReport report;
  check_superblock(paths, options, report);
  if (!report.fatal.empty()) return report;
  check_catalog(paths, report);
  check_chip(paths, options, report);
  return report;
}

}  // namespace flashdir
