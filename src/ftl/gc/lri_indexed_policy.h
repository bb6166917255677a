// The part of Dual Greedy and greedy that is the same: keeping the closed blocks in multi-LRI
// lists (lri_lists.h) at the level of their valid count, from the FTL's notifications.
#pragma once

#include <cassert>

#include "ftl/gc_policy.h"
#include "lri_lists.h"

namespace flashdir::ftl {

class LriIndexedPolicy : public GcPolicy {
 public:
  explicit LriIndexedPolicy(const BlockTable& table)
      : table_(table), lists_(table.block_count(), table.pages_per_block()) {}

  void block_closed(BlockNumber block) override {
    assert(table_.info(block).state == BlockState::closed);
    // A closing block has just had its last page programmed, the most recent event it has
    // seen, so it joins the tail; a page invalidated while the block was open makes its place
    // only approximately least-recently-invalidated, the price of O(1) insertion.
    lists_.insert_tail(block, table_.info(block).valid_pages);
  }

  void page_invalidated(BlockNumber block, [[maybe_unused]] std::uint32_t valid_before) override {
    // Open blocks are not indexed, and neither is a victim whose pages GC is relocating.
    if (!lists_.contains(block)) return;
    assert(lists_.level_of(block) == valid_before && "lists out of step with the block table");
    assert(table_.info(block).valid_pages + 1 == valid_before);
    lists_.move_down(block);
  }

  void block_removed(BlockNumber block) override { lists_.remove(block); }

 protected:
  const BlockTable& table_;
  LriLists lists_;
};

}  // namespace flashdir::ftl
