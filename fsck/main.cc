// fsck.flashdir: checks a cache directory. Exit codes follow fsck(8).
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "flashdir/cache_lock.h"
#include "flashdir/check.h"
#include "flashdir/command_line.h"
#include "flashdir/progress.h"
#include "flashdir/size.h"
#include "flashdir/trusted_dir.h"

namespace {

constexpr int kExitUsage = 16;  // fsck(8): usage or syntax error

void print_report(const std::string& dir, const flashdir::CheckReport& report) {
  fmt::print("fsck.flashdir: {}\n", dir);
  if (report.have_superblock) {
    const auto& sb = report.superblock;
    fmt::print("  cache     {} ({})\n", sb.uuid.to_string(), sb.geometry.describe());
    fmt::print("  superblock sequence {}, {}\n", sb.sequence, sb.clean_shutdown ? "clean" : "not shut down cleanly");
  }
  const auto& chip = report.chip;
  if (chip.blocks > 0) {
    fmt::print("  blocks    {} ({} erased, {} full)\n", chip.blocks, chip.erased_blocks, chip.full_blocks);
    fmt::print("  pages     {} programmed: {} data, {} translation, {} checkpoint, {} damaged\n", chip.programmed_pages,
               chip.pages_by_kind[1], chip.pages_by_kind[2], chip.pages_by_kind[3], chip.damaged_pages);
    fmt::print("  wear      erase count min {} / mean {:.2f} / max {}\n", chip.erase_count_min, chip.erase_count_mean,
               chip.erase_count_max);
  }
  if (report.ftl.checked) {
    const auto& ftl = report.ftl;
    fmt::print(
        "  FTL       checkpoint {} ({}), {} of {} logical pages mapped, {} lost, {} pages rolled forward, {} "
        "mismatches\n",
        ftl.checkpoint_generation, ftl.checkpoint_clean ? "clean" : "changed since", ftl.mapped_pages,
        ftl.logical_pages, ftl.lost_lpns, ftl.rolled_forward_pages, ftl.mismatches);
  }
  if (report.cache.checked) {
    const auto& cache = report.cache;
    // Sequences start at 1: 0 means that no metadata page decodes.
    const std::string newest = cache.newest_sequence == 0
                                   ? std::string("no page decodes")
                                   : fmt::format("newest page {} (sequence {}, {} in its window)", cache.newest_page,
                                                 cache.newest_sequence, cache.window_pages);
    fmt::print("  metadata  {}, {} slots in {} metadata pages ({} damaged); {}, {}\n", cache.scheme, cache.slots,
               cache.metadata_pages, cache.damaged_metadata_pages, newest,
               cache.clean_shutdown ? "clean mark" : "no clean mark");
    fmt::print("  slots     {} usable ({} dirty in {} files), {} dropped by the usability rule ({} duplicates), {} orphans ({} dirty)\n",
               cache.usable_slots, cache.dirty_slots, cache.dirty_files, cache.dropped_slots, cache.duplicate_slots,
               cache.orphan_slots, cache.orphan_dirty_slots);
    fmt::print("  lost      {} slots of {} files whose records the catalog lost ({} dirty), {} dirty pages damaged\n",
               cache.lost_record_slots, cache.lost_record_files, cache.lost_record_dirty_slots,
               cache.damaged_dirty_slots);
    if (cache.backing_checked) fmt::print("  backing   {} catalog files gone\n", cache.missing_backing_files);
  }
  for (const auto& note : report.notes) fmt::print("  note: {}\n", note);
  for (const auto& repair : report.repairs) fmt::print("  repaired: {}\n", repair);
  for (const auto& error : report.errors) fmt::print("  error: {}\n", error);
  if (!report.fatal.empty()) fmt::print("  cannot continue: {}\n", report.fatal);
  const int code = report.exit_code();
  fmt::print("result: {} (exit {})\n",
             code == 0    ? "clean"
             : (code & 8) ? "operational error"
             : (code & 4) ? fmt::format("{} error(s) left uncorrected", report.errors.size())
                          : fmt::format("{} error(s) corrected", report.repairs.size()),
             code);
}

// An operational error before the checks start.
int refuse(const std::string& dir, const std::string& why) {
  flashdir::CheckReport report;
  report.fatal = why;
  print_report(dir, report);
  return report.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Checks a flashdir cache directory: superblock, catalog, chip image and the OOB record "
      "of every programmed page, the FTL mapping, and the cache's slot metadata against the catalog "
      "(doc/fsck.md). Exit status: 0 clean, 1 errors corrected, 4 errors left "
      "uncorrected, 8 operational error (sums when several apply), 16 usage or syntax error.",
      "fsck.flashdir"};
  std::string dir;
  bool no_changes = false;
  bool repair = false;
  app.add_option("DIR", dir, "Cache directory to check")->required();
  auto* n = app.add_flag("-n,--no-changes", no_changes, "Open everything read-only and change nothing (default)");
  // fsck(8) passes -p or -a at boot ("preen": repair what is safe without asking). Every repair
  // -y makes is safe in that sense for a cache: what it drops the backing holds, and dirty pages
  // it cannot place are kept in lost+found.
  app.add_flag("-y,--yes,-p,-a", repair,
               "Repair what can be repaired without asking (-p and -a, as fsck(8) passes them, do the same: "
               "nothing a repair drops is lost, see doc/fsck.md)")
      ->excludes(n);
  bool force = false;  // fsck(8)'s -f: this check never skips a cache that looks clean
  app.add_flag("-f,--force", force, "Check even a cache that was closed cleanly (it always does)");
  app.set_version_flag("-V,--version", fmt::format("fsck.flashdir {}", FLASHDIR_VERSION));
  std::string backing;
  app.add_option("--backing", backing,
                 "Backing directory the cache stands for, to check that the catalog's files exist (default: the "
                 "one the cache records in its catalog)");
  if (auto stop = flashdir::parse_command_line(app, argc, argv, "fsck.flashdir", kExitUsage)) return *stop;

  // What a repair creates (RocksDB's files among them) is private to the user.
  ::umask(077);
  // A repair writes into the cache directory: it must pass the check the daemon and mkfs make. A
  // read-only check opens every file without following links and reports what it finds.
  auto trusted = flashdir::open_trusted_dir(dir, repair ? flashdir::TrustPolicy::enforce : flashdir::TrustPolicy::warn,
                                            flashdir::CreateDirs::none);
  if (!trusted.is_ok()) {
    return refuse(dir, repair ? trusted.status().message() + "; fsck -n checks it without changing anything"
                              : trusted.status().message());
  }
  // The daemon's lock: a cache in use is neither repaired nor checked (its files change meanwhile).
  flashdir::LockRequest request;
  request.shared = !repair;
  request.program = "fsck.flashdir";
  request.state = "repairing";
  auto lock = flashdir::lock_cache_dir(*trusted, request);
  if (!lock.is_ok()) return refuse(dir, lock.status().message());
  if (repair) {
    if (auto s = flashdir::make_private(*trusted); !s.is_ok()) return refuse(dir, s.message());
  }

  flashdir::CheckOptions options;
  options.repair = repair;
  options.backing_dir = backing;
  std::unique_ptr<flashdir::ProgressBar> bar;
  options.progress = [&bar](std::uint64_t done, std::uint64_t total) {
    if (!bar) bar = std::make_unique<flashdir::ProgressBar>("scanning chip", total, 4096);
    bar->update(done);
  };
  flashdir::CheckReport report = flashdir::check_cache_dir(trusted->path, options);
  bar.reset();
  report.notes.insert(report.notes.begin(), trusted->warnings.begin(), trusted->warnings.end());
  print_report(dir, report);
  return report.exit_code();
}
