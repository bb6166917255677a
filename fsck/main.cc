// fsck.flashdir: checks a cache directory. Exit codes follow fsck(8).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "flashdir/check.h"
#include "flashdir/command_line.h"
#include "flashdir/progress.h"
#include "flashdir/size.h"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Checks a flashdir cache directory: superblock, catalog, chip image and the OOB record "
      "of every programmed page. Exit status: 0 clean, 1 errors corrected, 4 errors left "
      "uncorrected, 8 operational error (sums when several apply), 16 usage or syntax error."};
  std::string dir;
  bool no_changes = false;
  bool repair = false;
  app.add_option("DIR", dir, "Cache directory to check")->required();
  auto* n = app.add_flag("-n,--no-changes", no_changes, "Open everything read-only and change nothing (default)");
  app.add_flag("-y,--yes", repair, "Repair what can be repaired without asking")->excludes(n);
  if (auto stop = flashdir::parse_command_line(app, argc, argv, "fsck.flashdir", kExitUsage)) return *stop;

  flashdir::CheckOptions options;
  options.repair = repair;
  std::unique_ptr<flashdir::ProgressBar> bar;
  options.progress = [&bar](std::uint64_t done, std::uint64_t total) {
    if (!bar) bar = std::make_unique<flashdir::ProgressBar>("scanning chip", total, 4096);
    bar->update(done);
  };
  const flashdir::CheckReport report = flashdir::check_cache_dir(dir, options);
  bar.reset();
  print_report(dir, report);
  return report.exit_code();
}
