// The multi-LRI lists on their own, and as Dual Greedy and greedy keep them from the FTL's
// notifications.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "ftl/gc/lri_lists.h"
#include "gc_rig.h"

using namespace flashdir;
using namespace flashdir::ftl;
using namespace flashdir::ftl::testing;

namespace {

std::vector<std::uint64_t> numbers(const std::vector<BlockNumber>& blocks) {
  std::vector<std::uint64_t> out;
  for (const BlockNumber b : blocks) out.push_back(b.value);
  return out;
}
using V = std::vector<std::uint64_t>;

}  // namespace

TEST_CASE("an invalidation moves a block to the tail of the level below", "[gc][lri]") {
  LriLists lists(10, 4);
  REQUIRE(lists.level_count() == 5);
  lists.insert_tail(B(0), 4);
  lists.insert_tail(B(1), 4);
  lists.insert_tail(B(2), 4);
  CHECK(numbers(lists.blocks_at(4)) == V{0, 1, 2});

  lists.move_down(B(1));
  CHECK(numbers(lists.blocks_at(4)) == V{0, 2});
  CHECK(numbers(lists.blocks_at(3)) == V{1});
  lists.move_down(B(2));
  lists.move_down(B(0));
  // Level 3 now runs from least to most recently invalidated: 1, 2, 0.
  CHECK(numbers(lists.blocks_at(3)) == V{1, 2, 0});
  CHECK(lists.blocks_at(4).empty());
  CHECK(lists.head(3) == B(1));
  CHECK(lists.tail(3) == B(0));
  CHECK(lists.next(B(1)) == B(2));
  CHECK(lists.prev(B(1)) == std::nullopt);
  CHECK(lists.prev(B(0)) == B(2));
  CHECK(lists.next(B(0)) == std::nullopt);
  CHECK(lists.level_of(B(2)) == 3);
  CHECK(lists.size(3) == 3);

  // The head moving down leaves the next block as head; the block lands behind anything already
  // at the lower level.
  lists.insert_tail(B(7), 2);
  lists.move_down(B(1));
  CHECK(numbers(lists.blocks_at(3)) == V{2, 0});
  CHECK(numbers(lists.blocks_at(2)) == V{7, 1});

  // Removal from the middle, the head and the tail.
  lists.insert_tail(B(8), 3);
  lists.remove(B(0));
  CHECK(numbers(lists.blocks_at(3)) == V{2, 8});
  lists.remove(B(2));
  lists.remove(B(8));
  CHECK(lists.empty(3));
  CHECK(lists.head(3) == std::nullopt);
  CHECK_FALSE(lists.contains(B(0)));
  CHECK(lists.contains(B(7)));

  // A removed block can come back (the same physical block after erase and reprogramming).
  lists.insert_tail(B(0), 1);
  CHECK(numbers(lists.blocks_at(1)) == V{0});
}

TEST_CASE("the non-empty bitmap finds the lowest level at or above a given one", "[gc][lri]") {
  // 200 pages per block: 201 levels spread over four 64-bit words.
  LriLists lists(8, 200);
  CHECK(lists.lowest_nonempty_level(0) == std::nullopt);
  lists.insert_tail(B(0), 130);
  lists.insert_tail(B(1), 63);
  lists.insert_tail(B(2), 200);
  CHECK(lists.lowest_nonempty_level(0) == 63u);
  CHECK(lists.lowest_nonempty_level(63) == 63u);
  CHECK(lists.lowest_nonempty_level(64) == 130u);
  CHECK(lists.lowest_nonempty_level(131) == 200u);
  CHECK(lists.lowest_nonempty_level(200) == 200u);
  CHECK(lists.lowest_nonempty_level(201) == std::nullopt);
  lists.move_down(B(1));
  CHECK(lists.lowest_nonempty_level(0) == 62u);
  CHECK(lists.lowest_nonempty_level(63) == 130u);
  lists.remove(B(0));
  lists.remove(B(2));
  CHECK(lists.lowest_nonempty_level(63) == std::nullopt);
  lists.insert_tail(B(3), 0);
  CHECK(lists.lowest_nonempty_level(0) == 0u);
  CHECK(lists.lowest_nonempty_level(1) == 62u);
}

TEST_CASE("policies index closed blocks only and follow invalidations", "[gc][lri]") {
  // Greedy exposes the list order directly: it takes the head of the lowest level.
  GcRig rig(8, 4, format::GcPolicy::greedy);
  rig.fill(B(0), 1);
  rig.fill(B(1), 2);
  rig.fill(B(2), 3);
  CHECK(victim(rig, 10) == 0);  // all at level 4: the one that got there first

  rig.invalidate(B(2), 11);
  rig.invalidate(B(1), 12);
  CHECK(victim(rig, 13) == 2);  // level 3 = [2, 1]
  rig.invalidate(B(2), 14);
  rig.invalidate(B(1), 15);
  CHECK(victim(rig, 16) == 2);  // level 2 = [2, 1]: order kept by the moves
  rig.invalidate(B(0), 17, 2);
  CHECK(victim(rig, 18) == 2);  // level 2 = [2, 1, 0]: 0 joined at the tail

  // An open block is not a candidate, even a fully invalid one; invalidations in it are ignored.
  rig.open(B(5), 20, 2);
  rig.invalidate(B(5), 21, 2);
  CHECK(victim(rig, 22) == 2);
  // Closed with nothing valid: level 0, taken first.
  rig.close(B(5));
  CHECK(victim(rig, 23) == 5);

  // While a victim is collected its pages are invalidated after block_removed: ignored too.
  rig.collect(B(5), 24);
  rig.collect(B(2), 25);
  CHECK(victim(rig, 26) == 1);
  rig.collect(B(1), 27);
  rig.collect(B(0), 28);
  CHECK(victim(rig, 29) == -1);
  CHECK(rig.policy->blocks_examined_last_selection() == 0);
}
