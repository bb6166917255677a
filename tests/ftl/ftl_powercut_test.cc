// Power cuts at seeded random chip operations, inside host writes, GC, translation-page
// writes, checkpoints and recovery itself; after each cut fsck's FTL check must find nothing
// wrong, and the chip is reopened and every LPN must read back a value the durability contract
// allows (durability_check.h). Cuts aimed at each step of the protocol: powercut_*_test.cc.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>

#include "ftl/layout.h"
#include "chip_op_log.h"
#include "durability_check.h"
#include "ftl_harness.h"
#include "host.h"
#include "support/seed.h"
#include "workload_driver.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

struct CutStats {
  std::map<std::string, int> where;
  int cuts = 0;
  int during_recovery = 0;
};

// What the operation in flight at the cut was about.
std::string in_flight(const ChipOpLog& log, const FaultyChip& faulty) {
  return op_kind_name(log.ops()[faulty.cut().operation_index].kind);
}

// One run: format, then `cuts` times: run a workload on the faulty chip until the power goes;
// sometimes cut the power again during the recovery that follows; recover on a healthy chip
// and check every LPN.
void run_with_cuts(Backend backend, const FtlOptions& options, std::uint64_t seed, int cuts, CutStats& stats,
                   const Geometry& g = small_ftl_geometry(), std::uint32_t longest_run = 6) {
  auto layout = ftl::FtlLayout::compute(g, options.overprovision_permille);
  REQUIRE_OK(layout);
  TestChip chip(backend, g);
  SeededRandom random(seed);
  std::uint64_t logical_pages = 0;
  {
    auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
    REQUIRE_OK(ftl);
    logical_pages = (*ftl)->logical_pages();
  }
  Oracle oracle(logical_pages);
  std::uint64_t durable = 0;  // the durable watermark last seen before the cut
  for (int cut = 0; cut < cuts; ++cut) {
    INFO("cut " << cut);
    {
      REQUIRE(fsck_errors(chip.chip(), options) == "");
      auto ftl = Ftl::open(chip.chip(), chip.clock(), options);
      REQUIRE_OK(ftl);
      REQUIRE((*ftl)->durable_seq() >= durable);
      REQUIRE(verify_and_settle(**ftl, oracle, durable) == "");
      REQUIRE((*ftl)->recovery().dangling_mappings == 0);
      REQUIRE((*ftl)->recovery().shared_pages == 0);
    }
    FaultPlan plan;
    plan.seed = random.next_u64();
    plan.cut_one_in = 1200;
    FaultyChip faulty(chip.chip(), plan);
    ChipOpLog watched(faulty, layout->pool_first_block);
    auto ftl = Ftl::open(watched, chip.clock(), options);
    if (!ftl.is_ok()) {  // the power went while opening
      REQUIRE(ftl.status().code() == StatusCode::power_lost);
      ++stats.cuts;
      stats.where["open: " + in_flight(watched, faulty)]++;
      chip.reopen();
      continue;
    }
    Host host(**ftl, oracle);
    while (!host.power_lost()) {
      const std::uint64_t choice = random.uniform(100);
      const auto count = static_cast<std::uint32_t>(random.between(1, longest_run));
      const std::uint64_t lpn = random.uniform(logical_pages - count + 1);
      if (choice < 75) {
        host.write(lpn, count);
      } else if (choice < 88) {
        host.read(lpn, count);
      } else if (choice < 95) {
        host.trim(lpn, count);
      } else {
        host.flush();
      }
    }
    durable = host.durable();
    ++stats.cuts;
    stats.where[in_flight(watched, faulty)]++;
    ftl = Status::power_lost("dropped");
    chip.reopen();

    if (random.uniform(3) == 0) {  // and once more while recovering from it
      FaultPlan again;
      again.seed = random.next_u64();
      again.cut_at_operation = random.uniform(300);
      FaultyChip faulty_again(chip.chip(), again);
      ChipOpLog watched_again(faulty_again, layout->pool_first_block);
      auto recovering = Ftl::open(watched_again, chip.clock(), options);
      if (!recovering.is_ok()) {
        REQUIRE(recovering.status().code() == StatusCode::power_lost);
        ++stats.during_recovery;
        stats.where["recovery: " + in_flight(watched_again, faulty_again)]++;
      }
      recovering = Status::power_lost("dropped");
      chip.reopen();
    }
  }
  // A last recovery on a healthy chip, then a clean close and open.
  auto ftl = Ftl::open(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  REQUIRE(verify_and_settle(**ftl, oracle, durable) == "");
  REQUIRE_OK((*ftl)->close());
  ftl = Ftl::open(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  CHECK((*ftl)->recovery().clean);
  REQUIRE(verify_and_settle(**ftl, oracle, (*ftl)->durable_seq()) == "");
}

}  // namespace

TEST_CASE("power cuts anywhere keep the durability contract", "[ftl][powercut]") {
  const SeededRuns runs(1000);
  CutStats stats;
  int runs_done = 0;
  std::uint64_t run = 0;
  for (auto ram : kRamPolicies) {
    for (auto mapping : {format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page}) {
      for (auto gc : {format::GcPolicy::dual_greedy, format::GcPolicy::greedy, format::GcPolicy::cost_benefit}) {
        const std::uint64_t this_run = run++;
        if (!runs.selected(this_run)) continue;
        ++runs_done;
        const std::uint64_t seed = runs.seed(this_run);
        INFO(fmt::format("{} + {} + {} RAM, seed {}\nreplay: {}", format::mapping_scheme_name(mapping),
                         format::gc_policy_name(gc), format::ram_policy_name(ram), seed, runs.replay_command(this_run)));
        FtlOptions options = small_cache_options(mapping, gc, ram);
        options.checkpoint_interval_pages = 40;  // checkpoints at most flushes: cuts land in them too
        run_with_cuts(Backend::memory, options, seed, 12, stats);
      }
    }
  }
  std::string summary;
  for (const auto& [where, count] : stats.where) summary += fmt::format("{}: {}\n", where, count);
  fmt::print("{} power cuts ({} during recovery); operation in flight:\n{}", stats.cuts, stats.during_recovery, summary);
  INFO("cuts by operation in flight:\n" << summary);
  CHECK(stats.cuts == runs_done * 12);
  if (!runs.all_selected()) return;
  // The cuts must reach every step of the persistence protocol ("checkpoint" counts its slot
  // erase and its marker too).
  for (const std::string where : {"cold host data", "GC copy", "GC erase", "translation page", "checkpoint", "read"}) {
    INFO(where);
    int cuts = 0;
    for (const auto& [what, count] : stats.where) cuts += what.starts_with(where) ? count : 0;
    CHECK(cuts >= 2);
  }
  CHECK(stats.during_recovery >= 1);
}

TEST_CASE("power cuts on the image backend", "[ftl][powercut]") {
  const std::uint64_t seed = test_seed(2000);
  INFO("seed " << seed << "\nreplay: " << replay_command(seed));
  CutStats stats;
  run_with_cuts(Backend::image, small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy), seed, 20, stats);
  CHECK(stats.cuts == 20);
}

TEST_CASE("power cuts on a chip of 4 KiB pages and 128-page blocks", "[ftl][powercut]") {
  const SeededRuns runs(3000);
  CutStats stats;
  int runs_done = 0;
  std::uint64_t run = 0;
  for (auto ram : kRamPolicies) {
    for (auto mapping : {format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page}) {
      const std::uint64_t this_run = run++;
      if (!runs.selected(this_run)) continue;
      ++runs_done;
      const std::uint64_t seed = runs.seed(this_run);
      INFO(fmt::format("{} + {} RAM, seed {}\nreplay: {}", format::mapping_scheme_name(mapping),
                       format::ram_policy_name(ram), seed, runs.replay_command(this_run)));
      FtlOptions options;  // a 64 KiB device RAM, automatic checkpoint interval
      options.mapping = mapping;
      options.ram.policy = ram;
      run_with_cuts(Backend::memory, options, seed, 6, stats, Geometry{4096, 64, 128, 96}, 16);
    }
  }
  CHECK(stats.cuts == runs_done * 6);
}
