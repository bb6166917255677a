// Power cuts against the metadata store (DESIGN.md "cache"; doc/cache.md): a seeded workload
// of read-miss fills, writes in place and admitted, write-back of evicted dirty pages, fsyncs,
// truncates and changed files runs over a FaultyChip; the power goes at random chip operations and at
// named points of the protocol (after the metadata write, after the data write, before the
// confirmation, inside the forced window flush, during recovery itself). After recovery every
// usable slot must hold bytes the model allows, no file page may be usable twice, and every
// fsync'd dirty page must have survived. Every scheme, every RAM policy.
//
// Knobs: FLASHDIR_TEST_SEED (base seed), FLASHDIR_TEST_RUN (one run), FLASHDIR_CRASH_OPS
// (operations before a cut point is chosen, default small for CI).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "mini_cache.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::cache;
using namespace flashdir::testing;

namespace {

struct CrashCase {
  MetadataScheme scheme;
  format::RamPolicy ram;
};

std::vector<CrashCase> all_cases() {
  std::vector<CrashCase> cases;
  for (MetadataScheme scheme : kMetadataSchemes) {
    for (format::RamPolicy ram : kRamPolicies) cases.push_back({scheme, ram});
  }
  return cases;
}

constexpr std::uint64_t kRamBudgetBytes = 8 << 10;  // 16 pages of 512 bytes: data waits in RAM

// Runs `ops` operations over a chip that cuts at `plan`, then recovers (cutting recovery too
// if `recovery_plan`), checks, and runs `ops` more operations to see that the cache carries on.
std::vector<std::string> cut_and_check(const CrashCase& c, std::uint64_t seed, std::uint64_t ops, FaultPlan plan,
                                       std::optional<FaultPlan> recovery_plan, bool& cut_happened) {
  StoreRig rig(c.scheme, c.ram, plan, kRamBudgetBytes);
  MiniCacheOptions options;
  options.read_percent = 70;
  MiniCache cache(rig, options, seed);
  const Status s = cache.run(ops);
  cut_happened = rig.power_lost();
  if (!s.is_ok() && !rig.power_lost()) return {"workload failed without a cut: " + s.to_string()};
  if (recovery_plan) {
    auto cut_recovery = rig.power_cycle(recovery_plan);
    if (cut_recovery.is_ok() || !rig.power_lost()) {
      // The cut came after recovery: fine, recover again from whatever it left.
    }
  }
  auto recovered = rig.power_cycle();
  if (!recovered.is_ok()) return {"recovery failed: " + recovered.status().to_string()};
  std::vector<std::string> violations = cache.recover(*recovered);
  if (!violations.empty()) return violations;
  if (Status more = cache.run(ops / 2); !more.is_ok()) return {"after recovery: " + more.to_string()};
  return {};
}

}  // namespace

TEST_CASE("power cuts at random chip operations never let a slot serve wrong bytes", "[cache-meta][crash]") {
  const std::uint64_t ops = test_knob("FLASHDIR_CRASH_OPS", 300);
  SeededRuns runs(0xC0FFEE);
  const auto cases = all_cases();
  std::uint64_t cuts = 0;
  for (std::uint64_t run = 0; run < cases.size() * 4; ++run) {
    if (!runs.selected(run)) continue;
    const CrashCase& c = cases[run % cases.size()];
    SeededRandom random(runs.seed(run));
    FaultPlan plan;
    plan.seed = runs.seed(run);
    plan.cut_at_operation = random.between(50, ops * 6);
    bool cut = false;
    const auto violations = cut_and_check(c, runs.seed(run), ops, plan, std::nullopt, cut);
    cuts += cut ? 1 : 0;
    INFO(scheme_label(c.scheme) << ", RAM " << format::ram_policy_name(c.ram) << ", cut at operation "
                                << plan.cut_at_operation << "; replay: " << runs.replay_command(run));
    CHECK(violations == std::vector<std::string>{});
  }
  if (runs.all_selected()) CHECK(cuts > 0);
}

TEST_CASE("power cuts at the named points of the protocol and during recovery", "[cache-meta][crash]") {
  const std::uint64_t ops = test_knob("FLASHDIR_CRASH_OPS", 300);
  SeededRuns runs(0xBADC0DE);
  const auto cases = all_cases();
  std::uint64_t run = 0;
  for (const CrashCase& c : cases) {
    // A dry run (no cut) to learn where the points fall on the chip's operation count; the
    // same seed replays the same operations, so a cut aimed there lands there.
    const std::uint64_t seed = runs.seed(run);
    std::vector<std::pair<std::string, std::uint64_t>> targets;
    {
      FaultPlan none;
      StoreRig rig(c.scheme, c.ram, none, kRamBudgetBytes);
      MiniCacheOptions options;
      options.read_percent = 70;
      MiniCache cache(rig, options, seed);
      REQUIRE_OK(cache.run(ops));
      SeededRandom pick(seed);
      for (Point point : kPoints) {
        std::vector<std::uint64_t> at;
        for (const auto& [p, index] : cache.points()) {
          if (p == point) at.push_back(index);
        }
        if (point == Point::window_flush) {
          for (const auto& [first, end] : cache.window_flushes()) {
            for (std::uint64_t i = first; i < end; ++i) at.push_back(i);
          }
        }
        for (int k = 0; k < 2 && !at.empty(); ++k) targets.emplace_back(point_name(point), at[pick.uniform(at.size())]);
      }
    }
    for (const auto& [name, index] : targets) {
      for (InFlight in_flight : {InFlight::torn, InFlight::dropped}) {
        ++run;
        if (!runs.selected(run)) continue;
        FaultPlan plan;
        plan.seed = runs.seed(run);
        plan.cut_at_operation = index;
        plan.in_flight = in_flight;
        // Every other run also cuts recovery, at one of its first operations.
        std::optional<FaultPlan> recovery_cut;
        if (run % 2 == 0) {
          recovery_cut = FaultPlan{};
          recovery_cut->seed = plan.seed;
          recovery_cut->cut_at_operation = SeededRandom(plan.seed).between(1, 400);
        }
        bool cut = false;
        const auto violations = cut_and_check(c, seed, ops, plan, recovery_cut, cut);
        INFO(scheme_label(c.scheme) << ", RAM " << format::ram_policy_name(c.ram) << ", cut " << name << " (operation "
                                    << index << (in_flight == InFlight::torn ? ", torn" : ", dropped")
                                    << (recovery_cut ? ", and during recovery" : "") << "); replay: "
                                    << runs.replay_command(run));
        CHECK(cut);
        CHECK(violations == std::vector<std::string>{});
      }
    }
    ++run;
  }
}
