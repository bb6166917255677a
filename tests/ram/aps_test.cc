// APS: the cost-benefit arithmetic on hand-computed cases, the step controller on benefit
// curves with a known best split (it converges, and holds still on a stationary workload), the
// ghost bitmap's conditional flush, and repartitioning that follows the ghosts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "flashdir/random.h"
#include "support/seed.h"

#include "ftl/ram/aps_model.h"
#include "ftl/ram/ghost_bitmap.h"
#include "ftl/ram/ghost_buffer.h"
#include "ram_rig.h"

using namespace flashdir;
using namespace flashdir::ram;
using namespace flashdir::testing;

TEST_CASE("aps: profits and benefits by the paper's formulas", "[ram][aps]") {
  ApsCosts c;
  c.read_ns = 25'000;
  c.program_ns = 200'000;
  c.translation_gc_ns_per_page = 50'000;  // T_two
  c.data_gc_ns_per_page = 100'000;        // T_dwo
  c.batch_factor = 5;                     // F_b
  c.read_miss_ratio = 0.5;
  c.write_miss_ratio = 0.25;
  ApsGhostHits h;
  h.mapping_reads = 10;
  h.mapping_writes = 20;
  h.buffer_reads = 4;
  h.buffer_writes = 2;
  // P_GM = 10 * 25000 + 20 * (25000 + 200000 + 50000) / 5 = 250000 + 1100000
  // P_GB = 4 * (25000 + 25000 * 0.5) + 2 * (200000 + 100000 + 55000 * 0.25) = 150000 + 627500
  const ApsDecision d = aps_decide(h, c, /*S_GB=*/4096 * 10, /*S_GM=*/8 * 1000);
  CHECK(d.profit_mapping == Approx(1'350'000));
  CHECK(d.profit_buffer == Approx(777'500));
  CHECK(d.benefit_mapping == Approx(1'350'000.0 / 8000));
  CHECK(d.benefit_buffer == Approx(777'500.0 / 40960));
  // Mapping wins (168.75 against 18.98 ns per byte): it grows by the first step.
  ApsStepController controller(/*min=*/100, /*initial=*/1000, /*max=*/10'000);
  CHECK(controller.next(d, h.total()).to_mapping_bytes == 1000);
}

TEST_CASE("aps: every division is guarded", "[ram][aps]") {
  ApsCosts c;
  c.read_ns = 25'000;
  c.program_ns = 200'000;
  c.batch_factor = 0;  // no write-back seen yet
  ApsGhostHits h;
  h.buffer_writes = 3;
  // No ghost mapping at all, and no hits for it: the buffer wins by the capped ratio.
  ApsDecision d = aps_decide(h, c, 4096, 0);
  CHECK(d.benefit_mapping == 0);
  CHECK(d.benefit_buffer > 0);
  ApsStepController controller(8, 64, 1024);
  CHECK(controller.next(d, ApsStepController::kMinGhostHits).to_mapping_bytes == -64);
  // Nothing anywhere: no benefit, no move, and the step stays.
  d = aps_decide(ApsGhostHits{}, c, 0, 0);
  CHECK(d.benefit_buffer == 0);
  CHECK(d.benefit_mapping == 0);
  const ApsStepController::Step step = controller.next(d, ApsStepController::kMinGhostHits);
  CHECK(step.decided);
  CHECK(step.to_mapping_bytes == 0);
  CHECK(controller.step_bytes() == 64);
}

namespace {

// A workload with a known best split: the ghosts' benefit per byte falls as their partition
// grows, mapping as A / (m + c) and the buffer as B / (U - m + c) for a mapping partition m of
// U bytes, so that they cross at m* = (A (U + c) - B c) / (A + B). `noise` scales each benefit
// by a seeded factor in [1 - noise, 1 + noise], as the ghost hits of an interval would.
struct BenefitCurves {
  double usable = 1 << 20;
  double a = 1, b = 3, c = 4096;
  double best() const { return (a * (usable + c) - b * c) / (a + b); }
  ApsDecision at(double m, SeededRandom* random = nullptr, double noise = 0) const {
    ApsDecision d;
    d.benefit_mapping = a / (m + c);
    d.benefit_buffer = b / (usable - m + c);
    if (random != nullptr) {
      d.benefit_mapping *= 1 + noise * (2 * random->unit() - 1);
      d.benefit_buffer *= 1 + noise * (2 * random->unit() - 1);
    }
    return d;
  }
};

// The split along `decisions` decisions from `start`, clamped to [0, U] as PartitionedRam does.
std::vector<double> follow(const BenefitCurves& curves, double start, int decisions, SeededRandom* random = nullptr,
                           double noise = 0) {
  const auto usable = static_cast<std::uint64_t>(curves.usable);
  ApsStepController controller(usable / 256, usable / 32, usable / 8);
  std::vector<double> split{start};
  double m = start;
  for (int i = 0; i < decisions; ++i) {
    const ApsStepController::Step step = controller.next(curves.at(m, random, noise), 1000);
    REQUIRE(step.decided);
    m = std::clamp(m + static_cast<double>(step.to_mapping_bytes), 0.0, curves.usable);
    split.push_back(m);
  }
  return split;
}

double range(const std::vector<double>& v, std::size_t from) {
  const auto [lo, hi] = std::minmax_element(v.begin() + static_cast<std::ptrdiff_t>(from), v.end());
  return *hi - *lo;
}

}  // namespace

TEST_CASE("aps: the controller converges to a known best split from anywhere", "[ram][aps]") {
  const BenefitCurves curves;
  const double best = curves.best();  // about a quarter of the RAM
  for (const double start : {0.5, 0.0, 0.9, 1.0}) {
    INFO("start at " << start << " of the RAM, best split " << best / curves.usable);
    const std::vector<double> split = follow(curves, start * curves.usable, 60);
    // No stand-still: within 2% of the RAM of the best split in 20 decisions ...
    for (std::size_t i = 20; i < split.size(); ++i) CHECK(std::abs(split[i] - best) < 0.02 * curves.usable);
    // ... and no swing: afterwards it moves by at most a few of the smallest steps.
    CHECK(range(split, 20) <= 2 * curves.usable / 256);
  }
}

TEST_CASE("aps: no oscillation on a stationary workload with noisy ghost hits", "[ram][aps]") {
  const std::uint64_t seed = test_seed(20261127);
  INFO("seed " << seed << "; replay: " << replay_command(seed));
  SeededRandom random(seed);
  const BenefitCurves curves;
  // Each interval's benefits off by up to 30%: the sign near the best split is a coin toss.
  const std::vector<double> split = follow(curves, 0.5 * curves.usable, 400, &random, 0.3);
  // The split stays near the best one and its swing over the last 300 decisions is a small
  // share of the RAM, against the 0-98% swings of the paper's step at 64K and 512K tune units
  // (in a model of this test over 300 seeds: deviation median 5%, at most 12%; range median
  // 8%, at most 23%; noise this strong at every decision is a harsh case).
  double worst = 0;
  for (std::size_t i = 100; i < split.size(); ++i) worst = std::max(worst, std::abs(split[i] - curves.best()));
  CHECK(worst < 0.15 * curves.usable);
  CHECK(range(split, 100) < 0.25 * curves.usable);
}

TEST_CASE("aps: the controller decides only on enough ghost hits, and halves its step when it turns", "[ram][aps]") {
  ApsStepController controller(10, 1000, 100'000);
  ApsDecision towards_mapping;
  towards_mapping.benefit_mapping = 2;
  towards_mapping.benefit_buffer = 1;
  ApsDecision towards_buffer;
  towards_buffer.benefit_mapping = 1;
  towards_buffer.benefit_buffer = 2;
  // Too few hits: no decision, the caller keeps counting.
  CHECK_FALSE(controller.next(towards_mapping, ApsStepController::kMinGhostHits - 1).decided);
  const std::uint64_t n = ApsStepController::kMinGhostHits;
  CHECK(controller.next(towards_mapping, n).to_mapping_bytes == 1000);
  CHECK(controller.next(towards_mapping, n).to_mapping_bytes == 1000);
  CHECK(controller.next(towards_mapping, n).to_mapping_bytes == 1500);  // the third in a row: x1.5
  CHECK(controller.next(towards_mapping, n).to_mapping_bytes == 2250);
  CHECK(controller.next(towards_buffer, n).to_mapping_bytes == -1125);  // it turns: halved
  // Within the dead band: hold, step unchanged.
  ApsDecision close;
  close.benefit_mapping = 1.0;
  close.benefit_buffer = 1.02;
  CHECK(controller.next(close, n).to_mapping_bytes == 0);
  CHECK(controller.step_bytes() == 1125);
  // The step never falls below the smallest or grows past the largest.
  for (int i = 0; i < 30; ++i) (void)controller.next(i % 2 == 0 ? towards_mapping : towards_buffer, n);
  CHECK(controller.step_bytes() == 10);
  for (int i = 0; i < 60; ++i) (void)controller.next(towards_mapping, n);
  CHECK(controller.step_bytes() == 100'000);
}

TEST_CASE("aps: the ghost bitmap shrinks conditionally (alpha = 3)", "[ram][aps]") {
  GhostBitmap ghost(1 << 16, 1);
  ghost.set_capacity(1000);
  for (std::uint64_t lpn = 0; lpn < 900; ++lpn) ghost.insert(Lpn(lpn));
  CHECK(ghost.size() == 900);
  CHECK(ghost.set_bits() <= 900);
  CHECK(ghost.contains(Lpn(17)));
  // Shrinking to 500: 3 x set bits is not below 500, so random bits are cleared down to 500.
  ghost.set_capacity(500);
  CHECK(ghost.size() == 500);
  CHECK(ghost.set_bits() == 500);
  // Shrinking to 1600 changes nothing; to 1400 after colliding inserts: bits x 3 < size keeps bits.
  GhostBitmap small(64, 2);  // 64 bits: inserts collide heavily
  small.set_capacity(1000);
  for (std::uint64_t lpn = 0; lpn < 1000; ++lpn) small.insert(Lpn(lpn));
  REQUIRE(small.set_bits() <= 64);
  const std::uint64_t bits = small.set_bits();
  small.set_capacity(600);  // 3 x 64 < 600: only the size shrinks
  CHECK(small.size() == 600);
  CHECK(small.set_bits() == bits);
  small.set_capacity(10);  // 3 x 64 >= 10: bits are cleared down to 10
  CHECK(small.set_bits() == 10);
}

TEST_CASE("aps: the ghost buffer is an LRU of evicted pages bounded by the missing space", "[ram][aps]") {
  GhostBuffer ghost;
  ghost.set_capacity(3);
  for (std::uint64_t lpn = 1; lpn <= 5; ++lpn) ghost.insert(Lpn(lpn));
  CHECK(ghost.size() == 3);
  CHECK_FALSE(ghost.contains(Lpn(2)));
  CHECK(ghost.contains(Lpn(5)));
  ghost.set_capacity(1);
  CHECK(ghost.contains(Lpn(5)));
  CHECK_FALSE(ghost.contains(Lpn(4)));
}

TEST_CASE("aps: write hits in the ghost buffer grow the buffer", "[ram][aps]") {
  RamRig rig(format::RamPolicy::aps, 32 * 1024);
  const std::uint64_t start = rig.ram->usage().buffer_bytes;
  const std::uint64_t start_partition = rig.ram->usage().mapping_partition_bytes;
  // Rewrite a working set a little larger than the buffer: evicted pages come back (ghost
  // buffer hits) while the mapping cache misses rarely.
  std::uint64_t version = 0;
  const std::uint64_t pages = 40;  // the buffer holds about 30 pages of 512 bytes
  for (int round = 0; round < 30; ++round) {
    for (std::uint64_t lpn = 0; lpn < pages; ++lpn) {
      (void)rig.ram->lookup(Lpn(lpn), ftl::Access::write);
      rig.put(lpn, ++version);
      rig.settle();
      rig.ram->end_request();
    }
  }
  CHECK(rig.stats.aps_repartitions > 0);
  CHECK(rig.ram->usage().mapping_partition_bytes < start_partition);
  CHECK(rig.ram->usage().total() <= rig.ram->usage().budget_bytes);
  // The partition limits moved towards the buffer: it now holds more than at the start.
  for (std::uint64_t lpn = 0; lpn < pages; ++lpn) rig.put(lpn, ++version);
  rig.settle();
  CHECK(rig.ram->usage().buffer_bytes > start);
}

TEST_CASE("aps: on a stationary workload the split settles and stays", "[ram][aps]") {
  RamRig rig(format::RamPolicy::aps, 32 * 1024);
  // The workload of the test above, longer: the buffer gains and the mapping does not, so the
  // split moves towards the buffer until it holds the whole working set (40 pages of 512
  // bytes); then nothing is evicted, the ghosts see nothing, and the split must stay where it is.
  std::vector<double> split;
  std::uint64_t version = 0;
  const std::uint64_t pages = 40;
  for (int round = 0; round < 200; ++round) {
    for (std::uint64_t lpn = 0; lpn < pages; ++lpn) {
      (void)rig.ram->lookup(Lpn(lpn), ftl::Access::write);
      rig.put(lpn, ++version);
      rig.settle();
      rig.ram->end_request();
    }
    if (round % 5 == 4) split.push_back(static_cast<double>(rig.ram->usage().mapping_partition_bytes));
  }
  CHECK(rig.ram->usage().buffer_bytes == pages * 512);
  // It got there, and over the second half it did not move.
  CHECK(split.back() < split.front());
  CHECK(range(split, split.size() / 2) == 0);
  CHECK(rig.ram->usage().total() <= rig.ram->usage().budget_bytes);
}
