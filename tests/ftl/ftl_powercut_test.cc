// Power cuts at seeded random chip operations, inside host writes, GC, translation-page
// writes, checkpoints and recovery itself; after each cut fsck's FTL check must find nothing
// wrong, and the chip is reopened and every LPN must read back a value the durability contract
// allows (durability_check.h). Cuts aimed at each step of the protocol: powercut_*_test.cc.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <optional>

#include "ftl/layout.h"
#include "chip_op_log.h"
#include "durability_check.h"
#include "ftl_harness.h"
#include "host.h"
#include "read_flips.h"
#include "support/seed.h"
#include "workload_driver.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

struct CutStats {
  std::map<std::string, int> where;
  int cuts = 0;
  int during_recovery = 0;
  int recovery_cuts_in_a_row = 0;  // the most, over the runs
  int during_rebuild = 0;
  std::uint64_t recovery_flips = 0;  // bits flipped while recovering
  int moved_forward = 0;             // recoveries that moved the checkpoint's block table forward
  int rebuilt = 0;                   // recoveries that rebuilt it from the whole mapping
};

// Where the cuts of a run aim, in turn (each run starting elsewhere): every step of the
// persistence protocol, so coverage does not depend on luck, and anywhere at random.
constexpr std::optional<OpKind> kAims[] = {OpKind::cold_data,  OpKind::gc_copy,    OpKind::pool_erase, OpKind::translation,
                                           OpKind::checkpoint, OpKind::slot_erase, OpKind::read,       std::nullopt};
// Recovery reads the checkpoint and scans, writes translation pages and a checkpoint (in a
// slot it erases first): cuts aimed there land inside it whatever its length.
constexpr OpKind kRecoveryAims[] = {OpKind::read, OpKind::translation, OpKind::slot_erase, OpKind::checkpoint};
// A cut nothing aimed at comes at the latest here, so that a workload always ends.
constexpr std::uint64_t kBackstopOperation = 200000;

// What the operation in flight at the cut was about.
std::string in_flight(const ChipOpLog& log, const FaultyChip& faulty) {
  return op_kind_name(log.ops()[faulty.cut().operation_index].kind);
}

// Opens the FTL on `chip` with `faulty` cutting the power at an operation of `kind` aimed at
// (after up to `skip_max` others of its kind, if that many come); true if the power went.
template <typename Open>
bool cut_while(TestChip& chip, std::uint64_t pool_first_block, SeededRandom& random, OpKind kind,
               std::uint64_t skip_max, CutStats& stats, const std::string& label, Open open) {
  FaultPlan plan;
  plan.seed = random.next_u64();
  FaultyChip faulty(chip.chip(), plan);
  ChipOpLog watched(faulty, pool_first_block);
  watched.aim(faulty, kind, random.uniform(skip_max + 1));
  const Status status = open(watched);
  chip.reopen();
  if (status.is_ok()) return false;
  REQUIRE(status.code() == StatusCode::power_lost);
  stats.where[label + in_flight(watched, faulty)]++;
  return true;
}

// One run: format, then `cuts` times: run a workload on the faulty chip until the power goes
// (at an aimed step, kAims); sometimes cut the power again, several times in a row, during the
// recovery that follows, or inside a rebuild from a full scan (fsck -y); recover on a healthy
// chip, sometimes with transient bit flips, and check every LPN.
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
      // Every other recovery meets transient bit flips, which its re-reads must ride out.
      ReadFlips flips(chip.chip(), random.next_u64());
      if (cut % 2 == 1) flips.flip_one_in(64);
      auto ftl = Ftl::open(flips, chip.clock(), options);
      REQUIRE_OK(ftl);
      stats.recovery_flips += flips.flips();
      flips.flip_one_in(0);
      const RecoveryReport& recovery = (*ftl)->recovery();
      // The recovery's own checkpoint describes the chip exactly (valid counts included),
      // whichever way it rebuilt the block table.
      REQUIRE(fsck_errors(chip.chip(), options) == "");
      if (!recovery.clean) ++(recovery.moved_forward ? stats.moved_forward : stats.rebuilt);
      REQUIRE((*ftl)->durable_seq() >= durable);
      REQUIRE(verify_and_settle(**ftl, oracle, durable) == "");
      REQUIRE(recovery.dangling_mappings == 0);
      REQUIRE(recovery.shared_pages == 0);
      REQUIRE(recovery.lost_lpns == 0);
      REQUIRE((*ftl)->lost_lpns().empty());
    }
    FaultPlan plan;
    plan.seed = random.next_u64();
    const std::optional<OpKind> aim = kAims[(seed + static_cast<std::uint64_t>(cut)) % std::size(kAims)];
    if (aim) {
      plan.cut_at_operation = kBackstopOperation;
    } else {
      plan.cut_one_in = 1200;
    }
    FaultyChip faulty(chip.chip(), plan);
    ChipOpLog watched(faulty, layout->pool_first_block);
    if (aim) watched.aim(faulty, *aim, random.uniform(40));
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

    // And again, up to three times in a row, while recovering from it.
    int in_a_row = 0;
    for (std::uint64_t again = random.uniform(4); again > 0; --again) {
      const OpKind kind = kRecoveryAims[random.uniform(std::size(kRecoveryAims))];
      in_a_row += cut_while(chip, layout->pool_first_block, random, kind, 8, stats, "recovery: ", [&](NandChip& c) {
        return Ftl::open(c, chip.clock(), options).status();
      });
    }
    stats.during_recovery += in_a_row;
    stats.recovery_cuts_in_a_row = std::max(stats.recovery_cuts_in_a_row, in_a_row);
    // Or inside fsck -y's rebuild from a full scan, once or twice.
    if (random.uniform(4) == 0) {
      for (std::uint64_t again = random.between(1, 2); again > 0; --again) {
        const bool scanning = random.one_in(2);  // or writing its checkpoint
        stats.during_rebuild += cut_while(chip, layout->pool_first_block, random,
                                          scanning ? OpKind::read : OpKind::checkpoint, scanning ? 400 : 1, stats,
                                          "rebuild: ",
                                          [&](NandChip& c) { return Ftl::rebuild(c, chip.clock(), options).status(); });
      }
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
  fmt::print("{} power cuts, {} more during recovery (up to {} in a row), {} inside a rebuild; {} bits flipped during "
             "recovery; {} recoveries moved the checkpoint's block table forward, {} rebuilt it; operation in "
             "flight:\n{}",
             stats.cuts, stats.during_recovery, stats.recovery_cuts_in_a_row, stats.during_rebuild, stats.recovery_flips,
             stats.moved_forward, stats.rebuilt, summary);
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
  CHECK(stats.during_recovery >= 10);
  CHECK(stats.recovery_cuts_in_a_row >= 3);
  CHECK(stats.during_rebuild >= 2);
  CHECK(stats.recovery_flips >= 10);
  CHECK(stats.moved_forward >= 10);
  CHECK(stats.rebuilt >= 1);
}

TEST_CASE("power cuts on the image backend", "[ftl][powercut]") {
  const std::uint64_t seed = test_seed(2000);
  INFO("seed " << seed << "\nreplay: " << replay_command(seed));
  CutStats stats;
  run_with_cuts(Backend::image, small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy), seed, 20, stats);
  CHECK(stats.cuts == 20);
}

TEST_CASE("power cuts on the metadata-only backend", "[ftl][powercut]") {
  // The backend of trace replay: host pages carry no data, so versions are read from the OOB
  // records, and recovery's scan must still verify the translation pages' data.
  const SeededRuns runs(4000);
  CutStats stats;
  int runs_done = 0;
  std::uint64_t run = 0;
  for (auto mapping : {format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page}) {
    const std::uint64_t this_run = run++;
    if (!runs.selected(this_run)) continue;
    ++runs_done;
    const std::uint64_t seed = runs.seed(this_run);
    INFO(fmt::format("{}, seed {}\nreplay: {}", format::mapping_scheme_name(mapping), seed, runs.replay_command(this_run)));
    FtlOptions options = small_cache_options(mapping, format::GcPolicy::dual_greedy);
    options.checkpoint_interval_pages = 40;
    run_with_cuts(Backend::metadata, options, seed, 12, stats);
  }
  CHECK(stats.cuts == runs_done * 12);
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
