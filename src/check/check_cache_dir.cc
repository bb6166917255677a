#include <fmt/format.h>
#include <memory>
#include <system_error>

#include "ftl/layout.h"
#include "bounded_list.h"
#include "cache_check.h"
#include "catalog_check.h"
#include "chip_scan.h"
#include "damage_rule.h"
#include "flashdir/cache_dir.h"
#include "flashdir/check.h"
#include "flashdir/clock.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "ftl_check.h"
#include "image_check.h"
#include "superblock_check.h"

namespace flashdir {

int CheckReport::exit_code() const {
  if (!fatal.empty()) return 8 | (errors.empty() ? 0 : 4);
  return (repairs.empty() ? 0 : 1) | (errors.empty() ? 0 : 4);
}

namespace {

// Turns the damage the chip scan finds into notes (what a power cut explains) and errors.
class DamageReport {
 public:
  DamageReport(const Geometry& geometry, DamageRule rule, std::size_t limit, CheckReport& report)
      : geometry_(geometry), rule_(rule), limit_(limit), report_(report) {}

  void add(const BlockDamage& damage) {
    const std::vector<DamageVerdict> verdicts = rule_.judge(damage);
    if (verdicts.front() == DamageVerdict::interrupted_erase) {
      list(report_.notes, noted_, limit_,
           fmt::format("block {}: all {} programmed pages are damaged, as an interrupted erase leaves them",
                       damage.block.value, damage.programmed_pages));
      return;
    }
    for (std::size_t i = 0; i < damage.pages.size(); ++i) {
      const BlockDamage::Page& page = damage.pages[i];
      const std::string where =
          fmt::format("page {} (block {}, page {})", geometry_.page_at(damage.block, page.index).value,
                      damage.block.value, page.index);
      if (verdicts[i] == DamageVerdict::torn_program) {
        list(report_.notes, noted_, limit_,
             fmt::format("torn {}: {} (among the last programmed pages of its block, as a power cut leaves them)", where,
                         page.why));
      } else {
        list(report_.errors, errors_, limit_,
             fmt::format("damaged {}: {}; {}", where, page.why, rule_.unexplained_reason(damage, page)));
      }
    }
  }

  // Counts what the limit kept from being listed.
  void finish() {
    if (noted_ > limit_) report_.notes.push_back(fmt::format("... and {} more torn pages", noted_ - limit_));
    if (errors_ > limit_) report_.errors.push_back(fmt::format("... and {} more damaged pages", errors_ - limit_));
  }

 private:
  const Geometry& geometry_;
  DamageRule rule_;
  std::size_t limit_;
  CheckReport& report_;
  std::size_t noted_ = 0;
  std::size_t errors_ = 0;
};

// The first block after the checkpoint slots, or 0 if the geometry holds no FTL (check_ftl says why).
std::uint64_t first_pool_block(const format::Superblock& sb) {
  auto layout = ftl::FtlLayout::compute(sb.geometry, sb.overprovision_permille);
  return layout.is_ok() ? layout->pool_first_block : 0;
}

// `rebuild`: the image repair changed what the chip says (fsck -y), so the FTL mapping is
// rebuilt from a scan whatever the checks find.
void check_chip(const CacheDirPaths& paths, const CheckOptions& options, bool rebuild, CheckReport& report) {
  const std::size_t errors_before = report.errors.size();
  FtlRepair ftl_repair = FtlRepair::none_needed;
  std::size_t ftl_errors_end = 0;
  {
    auto store = open_image_store(paths.image, ImageAccess::read_only);
    if (!store.is_ok()) {
      report.fatal = fmt::format("cannot use the chip image: {}", store.status().message());
      return;
    }
    SimClock clock;
    SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
    ftl_repair = check_ftl(chip, report.superblock, options, report);
    ftl_errors_end = report.errors.size();
    // The FTL check tells whether anything was in flight when the chip stopped, which decides
    // what damage a power cut explains.
    const bool clean_shutdown = report.superblock.clean_shutdown && report.ftl.checked && report.ftl.checkpoint_clean;
    DamageReport damage(chip.geometry(), DamageRule(clean_shutdown, first_pool_block(report.superblock)),
                        options.max_listed_pages, report);
    auto judge = [&damage](const BlockDamage& found) { damage.add(found); };
    if (Status s = scan_chip(chip, report.chip, judge, options.progress); !s.is_ok()) {
      report.fatal = fmt::format("chip scan stopped: {}", s.message());
      return;
    }
    damage.finish();
  }
  const bool damage_found = report.errors.size() > ftl_errors_end;
  if (!options.repair || ftl_repair == FtlRepair::refused) return;
  if (ftl_repair == FtlRepair::none_needed && !damage_found && !rebuild) return;

  // fsck -y: replace the FTL state with one rebuilt from a scan of every page, whose LPNs
  // lost to damage read as errors from now on, and collect every block holding a damaged page
  // (nothing rewrites a programmed page; an erase clears it).
  auto writable = open_image_store(paths.image, ImageAccess::read_write);
  if (!writable.is_ok()) {
    report.errors.push_back(fmt::format("cannot open the image to repair it: {}", writable.status().message()));
    return;
  }
  SimClock clock;
  SimulatedChip chip(writable.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  std::vector<std::string> lost;
  if (Status s = rebuild_ftl(chip, report.superblock, options.max_listed_pages, lost); !s.is_ok()) {
    report.errors.push_back(fmt::format("rebuilding the FTL from a full scan failed: {}", s.message()));
    return;
  }
  // Everything the FTL check and the chip scan found is repaired (the scan's damage erased).
  const auto first = report.errors.begin() + static_cast<std::ptrdiff_t>(errors_before);
  report.repairs.insert(report.repairs.end(), first, report.errors.end());
  report.errors.erase(first, report.errors.end());
  report.repairs.push_back(
      "rebuilt the FTL mapping from a scan of every page, collected the blocks holding damaged pages and wrote "
      "fresh checkpoints");
  report.notes.insert(report.notes.end(), lost.begin(), lost.end());
}

// The steps in order, each on what the ones before left (doc/fsck.md).
void run_checks(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report, CheckState& state) {
  check_superblock(paths, options, report);
  if (!report.fatal.empty()) return;
  check_catalog(paths, options, report, state);
  check_image(paths, options, report, state);
  if (!report.fatal.empty()) return;
  if (!state.image_usable) {
    report.notes.push_back("the chip, its FTL and the cache metadata were not checked: they are once the image is repaired (fsck -y)");
    return;
  }
  check_chip(paths, options, state.rebuild_ftl, report);
  if (!report.fatal.empty()) return;
  check_cache(paths, options, report, state);
}

}  // namespace

CheckReport check_cache_dir(const std::filesystem::path& dir, const CheckOptions& options) {
  const CacheDirPaths paths(dir);
  CheckReport report;
  // A backing directory the caller names must be there: checking against nothing is no check.
  if (std::error_code ec; !options.backing_dir.empty() && !std::filesystem::is_directory(options.backing_dir, ec)) {
    report.fatal = fmt::format("the backing directory {} {}", options.backing_dir.string(),
                               std::filesystem::exists(options.backing_dir, ec) ? "is not a directory" : "does not exist");
    return report;
  }
  CheckState state;
  run_checks(paths, options, report, state);
  // -y replaces an unusable catalog only once the cache behind it is emptied of what it named.
  if (options.repair && !state.catalog_unusable.empty() && !state.catalog_replaced)
    report.errors.push_back(unusable_catalog_error(paths, state.catalog_unusable));
  return report;
}

}  // namespace flashdir
