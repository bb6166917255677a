// Figures for the cache engine's closing note (issue 9): for each metadata scheme (LUFUW,
// write-update, update-write-update) on a read-heavy and a write-heavy workload, the usable
// fraction after a power cut, metadata writes per data write, restart time and RAM bytes per
// cached page. It runs the engine on the tests' EngineRig (tests/cache/engine_rig.h: a memory
// chip of 512-byte pages, power cycles with a FaultPlan), so it is a Catch2 program; meson runs
// it as a benchmark (`meson test -C build --benchmark lufuw-figures -v`) and it prints a table.
//
// Each row: six files of 1,500 pages are read whole (the fill), then 4,000 seeded requests of
// 1 to 8 pages (reads or writes by the workload's mix, an fsync of the file one time in 50).
// Two cuts:
//   - at the end: the power goes when the requests are done (nothing in flight, the device
//     RAM and every unconfirmed write lost);
//   - at a random chip operation of the requests, one per seed (FLASHDIR_FIGURES_SEEDS, 3):
//     a dry run with the same seed counts the chip operations of the fill and of the
//     requests, and the cut lands uniformly among the requests' operations.
// The usable fraction is the restart's (usable / (usable + dropped + orphans)); "kept" is the
// usable pages over the pages cached just before the cut.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine_rig.h"
#include "flashdir/random.h"
#include "support/seed.h"

using flashdir::FaultPlan;
using flashdir::SeededRandom;
using flashdir::cache::EngineOptions;
using flashdir::cache::EngineStats;
using flashdir::cache::FileHandle;
using flashdir::cache::MetadataScheme;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

constexpr int kFiles = 6;
constexpr std::uint64_t kFilePages = 1500;
constexpr int kRequests = 4000;
constexpr std::uint64_t kChipBlocks = 1024;  // 16,384 pages of 512 bytes: room for every file

struct Workload {
  const char* name;
  WriteMode mode;
  int read_percent;
};

struct Cut {
  EngineStats before;  // just before the cut
  flashdir::cache::RestartReport restart;
  bool cut_during_requests = false;
  std::string failure;  // why the restart after the cut failed, if it did
};

std::string file_name(int f) { return "f" + std::to_string(f); }

std::uint64_t chip_operations(EngineRig& rig) {
  const flashdir::FtlStats s = rig.engine().ftl_stats();
  return s.chip_page_reads + s.chip_page_programs + s.chip_block_erases;
}

// The rig's engine runs the fill and the requests (stopping at a power loss); returns the chip
// operations counted after the fill.
std::uint64_t run_workload(EngineRig& rig, const Workload& workload, std::uint64_t seed) {
  const std::uint32_t P = rig.page_size();
  std::vector<FileHandle> files;
  std::vector<std::uint8_t> buffer(8 * P);
  for (int f = 0; f < kFiles; ++f) {
    auto file = rig.engine().open_file(file_name(f));
    if (!file.is_ok()) return 0;
    files.push_back(*file);
    for (std::uint64_t page = 0; page < kFilePages; page += 8) {
      if (!rig.engine().read(*file, page * P, buffer).is_ok()) return 0;
    }
  }
  const std::uint64_t after_fill = chip_operations(rig);
  SeededRandom random(seed);
  for (int request = 0; request < kRequests && !rig.power_lost(); ++request) {
    const auto f = static_cast<int>(random.uniform(kFiles));
    const auto pages = static_cast<std::uint32_t>(random.between(1, 8));
    const std::uint64_t first = random.uniform(kFilePages - pages + 1);
    const flashdir::ByteSpan span(buffer.data(), std::size_t{pages} * P);
    bool ok;
    if (random.one_in(50)) {
      ok = rig.engine().fsync(files[f]).is_ok();
    } else if (random.uniform(100) < static_cast<std::uint64_t>(workload.read_percent)) {
      ok = rig.engine().read(files[f], first * P, span).is_ok();
    } else {
      const auto bytes = pattern(seed * kRequests + static_cast<std::uint64_t>(request), span.size(), first * P);
      ok = rig.engine().write(files[f], first * P, bytes).is_ok();
    }
    if (!ok) break;
  }
  return after_fill;
}

std::unique_ptr<EngineRig> new_rig(MetadataScheme scheme, const Workload& workload) {
  EngineOptions options;
  options.metadata = scheme;
  options.write_mode = workload.mode;
  options.read_sequential_cutoff_bytes = 0;  // the fill is one long stream per file
  auto rig = std::make_unique<EngineRig>(options, kChipBlocks);
  for (int f = 0; f < kFiles; ++f)
    rig->put(file_name(f), pattern(static_cast<std::uint64_t>(f), kFilePages * rig->page_size()));
  return rig;
}

// The workload, then a cut: at the end (no plan), or at chip operation `cut_at` counted from
// the start of the fill.
Cut run_and_cut(MetadataScheme scheme, const Workload& workload, std::uint64_t seed,
                std::optional<std::uint64_t> cut_at) {
  auto rig = new_rig(scheme, workload);
  if (cut_at) {
    FaultPlan plan;
    plan.seed = seed;
    plan.cut_at_operation = *cut_at;
    REQUIRE(rig->power_cycle(plan).is_ok());  // an empty cache: this restart loses nothing
  }
  run_workload(*rig, workload, seed);
  Cut cut;
  cut.cut_during_requests = rig->power_lost();
  cut.before = rig->engine().stats();
  if (const flashdir::Status recovered = rig->power_cycle(); !recovered.is_ok()) {
    cut.failure = recovered.to_string();
    return cut;
  }
  cut.restart = rig->engine().stats().restart;
  return cut;
}

double kept(const Cut& cut) {
  return cut.before.cached_pages == 0
             ? 1.0
             : static_cast<double>(cut.restart.usable_slots) / static_cast<double>(cut.before.cached_pages);
}

// "usable fraction, kept of cached" of one cut, or why its restart failed.
std::string end_cut_cell(const Cut& cut) {
  if (!cut.failure.empty()) return "restart failed: " + cut.failure;
  return fmt::format("{:.4f}, {:.4f}, {}", cut.restart.usable_fraction, kept(cut), cut.restart.dirty_slots);
}

std::string random_cuts_cell(const std::vector<Cut>& cuts) {
  double usable_sum = 0, usable_min = 1, kept_sum = 0;
  int restarted = 0, in_requests = 0;
  std::string failures;
  for (const Cut& cut : cuts) {
    in_requests += cut.cut_during_requests ? 1 : 0;
    if (!cut.failure.empty()) {
      failures += "; restart failed: " + cut.failure;
      continue;
    }
    ++restarted;
    usable_sum += cut.restart.usable_fraction;
    usable_min = std::min(usable_min, cut.restart.usable_fraction);
    kept_sum += kept(cut);
  }
  std::string cell =
      restarted == 0 ? std::string("-")
                     : fmt::format("{:.4f} ({:.4f}), {:.4f}", usable_sum / restarted, usable_min, kept_sum / restarted);
  if (in_requests != static_cast<int>(cuts.size()))
    cell += fmt::format(" ({} of {} cuts landed after the requests)", cuts.size() - in_requests, cuts.size());
  return cell + failures;
}

}  // namespace

TEST_CASE("metadata schemes after a power cut: usable fraction, metadata writes, restart time, RAM per page") {
  const std::uint64_t seeds = flashdir::testing::test_knob("FLASHDIR_FIGURES_SEEDS", 3);
  const std::uint64_t base_seed = flashdir::testing::test_seed(20261125);
  const Workload workloads[] = {
      {"read-heavy (90% reads), write-through", WriteMode::write_through, 90},
      {"write-heavy (30% reads), write-through", WriteMode::write_through, 30},
      {"write-heavy (30% reads), write-back", WriteMode::write_back, 30},
  };
  std::printf("seed %llu (FLASHDIR_TEST_SEED replays it), %llu random cuts per row\n\n",
              static_cast<unsigned long long>(base_seed), static_cast<unsigned long long>(seeds));
  std::printf(
      "| scheme | workload | metadata writes / data write | entries / metadata write | cut at the end: usable "
      "fraction, kept of cached, dirty found | cut at a random chip operation: usable fraction mean (min), kept mean "
      "| restart ms (end cut) | RAM bytes / cached page |\n|---|---|---|---|---|---|---|---|\n");
  for (MetadataScheme scheme :
       {MetadataScheme::lufuw, MetadataScheme::write_update, MetadataScheme::update_write_update}) {
    for (const Workload& workload : workloads) {
      const Cut end = run_and_cut(scheme, workload, base_seed, std::nullopt);
      std::vector<Cut> cuts;
      for (std::uint64_t i = 0; i < seeds; ++i) {
        const std::uint64_t seed = base_seed + 1 + i;
        // Dry run: the chip operations of the fill and of the whole workload with this seed.
        auto dry = new_rig(scheme, workload);
        REQUIRE(dry->power_cycle().is_ok());  // as the cut run does, so that both count alike
        const std::uint64_t after_fill = run_workload(*dry, workload, seed);
        const std::uint64_t total = chip_operations(*dry);
        dry.reset();
        SeededRandom random(seed);
        cuts.push_back(run_and_cut(scheme, workload, seed, random.between(after_fill, total)));
      }
      const EngineStats& s = end.before;
      std::printf("| %s | %s | %.3f | %.2f | %s | %s | %s | %.1f |\n",
                  std::string(flashdir::cache::metadata_scheme_name(scheme)).c_str(), workload.name,
                  s.metadata_writes_per_data_write(),
                  s.metadata_writes == 0
                      ? 0.0
                      : static_cast<double>(s.metadata_entries_written) / static_cast<double>(s.metadata_writes),
                  end_cut_cell(end).c_str(), random_cuts_cell(cuts).c_str(),
                  end.failure.empty() ? fmt::format("{:.1f}", end.restart.seconds * 1000).c_str() : "-",
                  s.ram_bytes_per_cached_page);
      std::fflush(stdout);
    }
  }
}
