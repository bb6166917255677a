// The baselines: greedy and Kawaguchi's cost-benefit.
#include <catch2/catch.hpp>

#include "gc_rig.h"

using namespace flashdir;
using namespace flashdir::ftl;
using namespace flashdir::ftl::testing;

TEST_CASE("greedy takes the fewest valid pages, least recently invalidated first", "[gc][greedy]") {
  GcRig rig(16, 8, format::GcPolicy::greedy);
  rig.fill(B(0), 0);
  rig.fill(B(1), 1);
  rig.fill(B(2), 2);
  rig.fill(B(3), 3);
  rig.fill(B(4), 4);
  rig.invalidate(B(0), 10, 5);  // level 3
  rig.invalidate(B(1), 11, 7);  // level 1
  rig.invalidate(B(2), 12, 3);  // level 5
  rig.invalidate(B(3), 13, 7);  // level 1, after block 1
  rig.invalidate(B(4), 14, 8);  // level 0

  // Unlike Dual Greedy, recency never outweighs utilization.
  const std::int64_t expected[] = {4, 1, 3, 0, 2};
  for (const std::int64_t block : expected) {
    CHECK(victim(rig, 20) == block);
    CHECK(rig.policy->blocks_examined_last_selection() == 1);
    rig.collect(B(static_cast<std::uint64_t>(block)), 21);
  }
  CHECK(victim(rig, 22) == -1);
  CHECK_FALSE(rig.policy->is_hot_write(B(0), 22));
  CHECK(rig.policy->hot_threshold() == 0);
}

TEST_CASE("cost-benefit scores age * (1 - u) / 2u", "[gc][cost-benefit]") {
  // 8 pages per block. Scores by hand, as functions of now:
  //   block 0: 2 valid (u = 1/4), last invalidated at 60:  (now - 60) * (3/4) / (1/2) = 1.5 (now - 60)
  //   block 1: 4 valid (u = 1/2), last invalidated at 10:  (now - 10) * (1/2) / 1     = 0.5 (now - 10)
  //   block 2: 1 valid (u = 1/8), last invalidated at 95:  (now - 95) * (7/8) / (1/4) = 3.5 (now - 95)
  //   block 3: 6 valid (u = 3/4), last invalidated at 5:   (now - 5) * (1/4) / (3/2)  = (now - 5) / 6
  // At now = 100: 60, 45, 17.5, 15.83 -> block 0 (greedy would take block 2).
  // Blocks 0 and 2 cross where 1.5 (now - 60) = 3.5 (now - 95), at now = 121.25:
  //   now = 121: 91.5 vs 91 -> block 0;  now = 122: 93 vs 94.5 -> block 2.
  GcRig rig(8, 8, format::GcPolicy::cost_benefit);
  rig.fill(B(3), 0);
  rig.invalidate(B(3), 5, 2);
  rig.fill(B(1), 1);
  rig.invalidate(B(1), 10, 4);
  rig.fill(B(0), 2);
  rig.invalidate(B(0), 60, 6);
  rig.fill(B(2), 3);
  rig.invalidate(B(2), 95, 7);

  CHECK(victim(rig, 100) == 0);
  CHECK(rig.policy->blocks_examined_last_selection() == 4);  // every candidate, the O(N) baseline
  CHECK(victim(rig, 121) == 0);
  CHECK(victim(rig, 122) == 2);
  CHECK_FALSE(rig.policy->is_hot_write(B(0), 122));

  // Removal keeps the candidate vector consistent (block 2 sits in the middle of it).
  rig.collect(B(2), 122);
  CHECK(victim(rig, 122) == 0);  // 93 vs 56 vs 19.5
  CHECK(rig.policy->blocks_examined_last_selection() == 3);
  // A fresh invalidation makes block 0 young again: 1 valid page, score 3.5 (now - 122).
  rig.invalidate(B(0), 122);
  CHECK(victim(rig, 122) == 1);  // age 0 scores 0; block 1: 56, block 3: 19.5
  CHECK(victim(rig, 160) == 0);  // 133 vs 75 vs 25.83

  // A fully invalid block is taken at once, whatever the others score.
  rig.invalidate(B(3), 161, 6);
  CHECK(victim(rig, 1000000) == 3);
  rig.collect(B(3), 1000000);
  rig.collect(B(0), 1000000);
  rig.collect(B(1), 1000000);
  CHECK(victim(rig, 1000001) == -1);
  CHECK(rig.policy->blocks_examined_last_selection() == 0);
}

TEST_CASE("cost-benefit breaks ties by valid pages, then block number", "[gc][cost-benefit]") {
  GcRig rig(8, 8, format::GcPolicy::cost_benefit);
  rig.fill(B(5), 0);
  rig.fill(B(2), 0);
  rig.fill(B(7), 0);
  rig.invalidate(B(5), 50, 3);
  rig.invalidate(B(2), 50, 3);
  rig.invalidate(B(7), 50, 4);
  // At now = 50 every age is 0, so every score is 0.
  CHECK(victim(rig, 50) == 7);  // fewest valid pages
  rig.collect(B(7), 50);
  CHECK(victim(rig, 50) == 2);  // same count: lower block number
  // Full blocks never invalidated score 0 whatever their age (u = 1).
  GcRig full(4, 8, format::GcPolicy::cost_benefit);
  full.fill(B(3), 0);
  full.fill(B(1), 0);
  CHECK(victim(full, 1000) == 1);
}
