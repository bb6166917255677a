// APS: the cost-benefit arithmetic on hand-computed cases, the ghost bitmap's conditional
// flush, and repartitioning that follows the ghosts.
#include <catch2/catch.hpp>

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
  const ApsDecision d = aps_decide(h, c, /*S_GB=*/4096 * 10, /*S_GM=*/8 * 1000, /*tune=*/8, 1024);
  CHECK(d.profit_mapping == Approx(1'350'000));
  CHECK(d.profit_buffer == Approx(777'500));
  CHECK(d.benefit_mapping == Approx(1'350'000.0 / 8000));
  CHECK(d.benefit_buffer == Approx(777'500.0 / 40960));
  // Mapping wins by 168.75 / 18.98 = 8.89: it grows by 8 x 8.89 bytes.
  CHECK(d.to_mapping_bytes == std::llround(8 * (1'350'000.0 / 8000) / (777'500.0 / 40960)));
}

TEST_CASE("aps: every division is guarded", "[ram][aps]") {
  ApsCosts c;
  c.read_ns = 25'000;
  c.program_ns = 200'000;
  c.batch_factor = 0;  // no write-back seen yet
  ApsGhostHits h;
  h.buffer_writes = 3;
  // No ghost mapping at all, and no hits for it: the buffer wins by the capped ratio.
  ApsDecision d = aps_decide(h, c, 4096, 0, 8, 1024);
  CHECK(d.benefit_mapping == 0);
  CHECK(d.to_mapping_bytes == -8 * 1024);
  // Nothing anywhere: no move.
  d = aps_decide(ApsGhostHits{}, c, 0, 0, 8, 1024);
  CHECK(d.to_mapping_bytes == 0);
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
