// Dual Greedy's victim choice (level 0, utilization mode, stability mode) and its hot threshold,
// on small hand-built block tables. Block times are in host page writes.
#include <catch2/catch.hpp>

#include "gc_rig.h"

using namespace flashdir;
using namespace flashdir::ftl;
using namespace flashdir::ftl::testing;

namespace {

constexpr std::uint32_t kPages = 8;

GcRig dual_greedy_rig(std::uint64_t blocks = 32) {
  return GcRig(blocks, kPages, format::GcPolicy::dual_greedy);
}

// Brings the full block `block` (programmed at `first_program`) down to `valid` pages, the
// last invalidation at `last_invalidation`.
void bring_to(GcRig& rig, BlockNumber block, HostTime first_program, std::uint32_t valid,
              HostTime last_invalidation) {
  rig.fill(block, first_program);
  rig.invalidate(block, last_invalidation, kPages - valid);
}

}  // namespace

TEST_CASE("dual greedy: make_gc_policy gives it by default and it starts empty", "[gc][dual-greedy]") {
  GcRig rig = dual_greedy_rig();
  CHECK(victim(rig, 0) == -1);
  CHECK(rig.policy->blocks_examined_last_selection() == 0);
  CHECK(rig.policy->hot_threshold() == 0);
  rig.fill(B(3), 0);
  CHECK(victim(rig, 1) == 3);  // a lone full block is still a candidate
}

TEST_CASE("dual greedy: a fully invalid block is taken before anything else", "[gc][dual-greedy]") {
  GcRig rig = dual_greedy_rig();
  bring_to(rig, B(0), 0, 1, 5);   // one valid page, more stable
  bring_to(rig, B(1), 10, 1, 20);
  bring_to(rig, B(2), 30, 0, 40);  // level 0, the most recently invalidated of all
  bring_to(rig, B(3), 50, 0, 60);
  CHECK(victim(rig, 100) == 2);   // level 0's head: least recently emptied
  rig.collect(B(2), 101);
  CHECK(victim(rig, 102) == 3);
  rig.collect(B(3), 103);
  CHECK(victim(rig, 104) == 0);   // back to level 1 (utilization mode: two blocks there)
}

TEST_CASE("dual greedy: utilization mode takes the head of a top level with several blocks",
          "[gc][dual-greedy]") {
  GcRig rig = dual_greedy_rig();
  bring_to(rig, B(0), 0, 5, 10);  // level 5, very stable
  rig.fill(B(1), 1);
  rig.fill(B(2), 2);
  rig.fill(B(3), 3);
  // Block 2 reaches level 2 first, then 1, then 3.
  rig.invalidate(B(2), 20, kPages - 2);
  rig.invalidate(B(1), 30, kPages - 2);
  rig.invalidate(B(3), 40, kPages - 2);
  CHECK(victim(rig, 50) == 2);
  // Select does not remove: asking again gives the same block.
  CHECK(victim(rig, 51) == 2);
  // Block 2 invalidated again drops alone to level 1: stability mode. Level 2's head, block 1
  // (last invalidated at 30, before block 2's 60), is more stable and goes first.
  rig.invalidate(B(2), 60);
  CHECK(victim(rig, 61) == 1);
  rig.collect(B(1), 62);
  CHECK(victim(rig, 63) == 3);  // level 2 = [3], invalidated at 40
  rig.collect(B(3), 64);
  CHECK(victim(rig, 65) == 0);  // level 5, invalidated at 10
  rig.collect(B(0), 66);
  CHECK(victim(rig, 67) == 2);  // alone
}

TEST_CASE("dual greedy: stability mode prefers a more stable block at a higher level",
          "[gc][dual-greedy]") {
  GcRig rig = dual_greedy_rig();
  bring_to(rig, B(0), 0, 2, 100);  // the only top-level block (level 2), invalidated recently
  bring_to(rig, B(1), 0, 3, 120);  // level 3: invalidated after block 0, not more stable
  bring_to(rig, B(2), 0, 6, 10);   // level 6: more stable
  bring_to(rig, B(3), 0, 4, 50);   // level 4: more stable, and fewer valid pages than block 2
  bring_to(rig, B(4), 0, 4, 60);   // level 4 behind block 3: never looked at
  CHECK(victim(rig, 200) == 3);
  // Threshold head (block 0), then the heads of levels 3 and 4; level 6 is never reached.
  CHECK(rig.policy->blocks_examined_last_selection() == 3);

  // Once block 3 goes, block 4 heads level 4 and is still more stable than block 0.
  rig.collect(B(3), 201);
  CHECK(victim(rig, 202) == 4);
  rig.collect(B(4), 203);
  CHECK(victim(rig, 204) == 2);
  CHECK(rig.policy->blocks_examined_last_selection() == 3);  // block 0, levels 3 and 6
}

TEST_CASE("dual greedy: stability mode falls back to the top block when none is more stable",
          "[gc][dual-greedy]") {
  GcRig rig = dual_greedy_rig();
  bring_to(rig, B(0), 0, 3, 50);  // the only top-level block
  bring_to(rig, B(1), 0, 4, 60);
  bring_to(rig, B(2), 0, 7, 50);  // same time as the top block: not *less* recently invalidated
  CHECK(victim(rig, 100) == 0);
  CHECK(rig.policy->blocks_examined_last_selection() == 3);
  // A block closed before it was full and never invalidated counts as the most stable of all
  // (time 0).
  rig.open(B(3), 70, kPages - 2);  // level 6, alone there
  rig.close(B(3));
  CHECK(victim(rig, 101) == 3);
}

TEST_CASE("dual greedy: stability mode never takes a full block", "[gc][dual-greedy]") {
  // Full blocks look the most stable (never invalidated) but collecting one frees nothing; the
  // FTL's GC would copy it into a new full block and never get ahead.
  GcRig rig = dual_greedy_rig();
  bring_to(rig, B(0), 0, 2, 50);  // the only top-level block
  rig.fill(B(1), 10);
  rig.fill(B(2), 20);
  CHECK(victim(rig, 100) == 0);
  CHECK(rig.policy->blocks_examined_last_selection() == 1);
  // A full block alone is still collected when there is nothing else.
  GcRig lone = dual_greedy_rig();
  lone.fill(B(4), 0);
  lone.fill(B(5), 0);
  CHECK(victim(lone, 1) == 4);
}

TEST_CASE("dual greedy: the hot threshold comes from up to 8 heads of the top level",
          "[gc][dual-greedy][hot]") {
  GcRig rig = dual_greedy_rig();
  // Before the first selection nothing is hot, however young the previous block.
  rig.fill(B(20), 1000);
  CHECK(rig.policy->hot_threshold() == 0);
  CHECK_FALSE(rig.policy->is_hot_write(B(20), 1000));
  CHECK_FALSE(rig.policy->is_hot_write(B(20), 1001));

  // Ten blocks reach level 3 in block order; lifetimes (last invalidation - first program):
  const HostTime lifetimes[10] = {5, 7, 30, 2, 11, 0, 29, 4, /* beyond the 8 heads: */ 500, 900};
  for (std::uint64_t b = 0; b < 10; ++b) {
    const HostTime first_program = 100 + b;
    bring_to(rig, B(b), first_program, 3, first_program + lifetimes[b]);
  }
  // (The list order is that of the invalidations, block 0 first, whatever times they carry.)

  CHECK(victim(rig, 2000) == 0);  // utilization mode
  CHECK(rig.policy->hot_threshold() == 30);
  CHECK(rig.policy->blocks_examined_last_selection() == 8);

  // Hot iff now - first_program < threshold.
  const HostTime now = 3000;
  rig.open(B(21), now - 29, 1);
  rig.open(B(22), now - 30, 1);
  rig.open(B(23), now - 31, 1);
  CHECK(rig.policy->is_hot_write(B(21), now));
  CHECK_FALSE(rig.policy->is_hot_write(B(22), now));
  CHECK_FALSE(rig.policy->is_hot_write(B(23), now));
  CHECK(rig.policy->is_hot_write(B(20), 1029));  // closed blocks too (20 was programmed at 1000)

  // Refreshed at each selection over the current heads: with block 0 gone they are 1..8, and
  // block 8 (lifetime 500) is among them, block 9 (900) still not.
  rig.collect(B(0), 3001);
  CHECK(victim(rig, 3003) == 1);
  CHECK(rig.policy->hot_threshold() == 500);
  CHECK(rig.policy->is_hot_write(B(23), now));

  // Fewer than 8 blocks at the top level: all of them. Block 9 alone at level 2 now, and the
  // threshold follows it down (not kept as a maximum).
  rig.invalidate(B(9), 3010);  // lifetime 3010 - 109
  CHECK(victim(rig, 3011) == 1);  // stability mode: block 1 (level 3) is more stable
  CHECK(rig.policy->hot_threshold() == 3010 - 109);
  CHECK(rig.policy->blocks_examined_last_selection() == 2);
  rig.invalidate(B(9), 3020, 2);  // level 0 now; block 1 heads the top level (3) again
  CHECK(victim(rig, 3021) == 9);
  CHECK(rig.policy->hot_threshold() == 500);

  // Refreshed even when the victim comes from level 0; a top level whose blocks were never
  // invalidated gives 0.
  GcRig fresh = dual_greedy_rig();
  fresh.fill(B(0), 10);
  bring_to(fresh, B(1), 20, 0, 90);
  CHECK(victim(fresh, 100) == 1);
  CHECK(fresh.policy->hot_threshold() == 0);
  CHECK(fresh.policy->blocks_examined_last_selection() == 2);
  fresh.invalidate(B(0), 95);
  CHECK(victim(fresh, 101) == 1);
  CHECK(fresh.policy->hot_threshold() == 85);
  // With only level 0 left the threshold keeps its last value.
  fresh.collect(B(0), 102);
  CHECK(victim(fresh, 103) == 1);
  CHECK(fresh.policy->hot_threshold() == 85);
}

TEST_CASE("dual greedy: the worst case looks at one head per level", "[gc][dual-greedy][bound]") {
  // One block at each level 1..P. The level-1 block lost its pages first and every other head
  // later, so stability mode compares it with the head of every level below P (full blocks are
  // never stability victims) and finds none more stable: 1 + (P - 2) blocks examined.
  constexpr std::uint32_t kP = 64;
  GcRig rig(kP + 1, kP, format::GcPolicy::dual_greedy);
  HostTime t = 1;
  for (std::uint32_t level = 1; level <= kP; ++level) {
    rig.fill(B(level - 1), t++);
    if (level < kP) rig.invalidate(B(level - 1), t++, kP - level);
  }
  rig.table.forget_reads();
  CHECK(victim(rig, t) == 0);
  CHECK(rig.policy->blocks_examined_last_selection() == kP - 1);
  CHECK(rig.table.blocks_read() == kP - 1);  // the policy's count agrees with the table's
  // Only heads are looked at: a block closed at level P - 1 joins its tail, and although never
  // invalidated (time 0) it is not considered while the head is less stable than block 0.
  rig.open(B(kP), t++, kP - 1);
  rig.close(B(kP));
  CHECK(victim(rig, t) == 0);
  CHECK(rig.policy->blocks_examined_last_selection() == kP - 1);
}
