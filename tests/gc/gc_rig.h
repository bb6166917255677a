// A hand-driven BlockTable plus one GC policy, notified the way the FTL notifies it: each call
// changes the table first, then tells the policy. Pages of a block are programmed from page 0
// and invalidated in the same order, so a block's next page to invalidate is just a counter.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ftl/gc_policy.h"

namespace flashdir::ftl::testing {

// A BlockTable that counts the distinct blocks whose records are read: how much a policy
// looks at, measured from outside the policy.
class CountingBlockTable final : public BlockTable {
 public:
  CountingBlockTable(std::uint64_t block_count, std::uint32_t pages_per_block)
      : BlockTable(block_count, pages_per_block), counted_in_round_(block_count, 0) {}

  const BlockInfo& info(BlockNumber block) const override {
    if (counted_in_round_[block.value] != round_) {
      counted_in_round_[block.value] = round_;
      ++blocks_read_;
    }
    return BlockTable::info(block);
  }
  // Starts counting afresh.
  void forget_reads() {
    ++round_;
    blocks_read_ = 0;
  }
  std::uint64_t blocks_read() const { return blocks_read_; }

 private:
  mutable std::vector<std::uint64_t> counted_in_round_;  // per block: the last round it was counted in
  std::uint64_t round_ = 1;
  mutable std::uint64_t blocks_read_ = 0;
};

class GcRig {
 public:
  GcRig(std::uint64_t block_count, std::uint32_t pages_per_block, format::GcPolicy kind)
      : table(block_count, pages_per_block),
        policy(make_gc_policy(kind, table)),
        programmed_(block_count, 0),
        invalidated_(block_count, 0) {}

  std::uint32_t pages_per_block() const { return table.pages_per_block(); }
  std::uint32_t valid(BlockNumber block) const { return table.info(block).valid_pages; }

  // free -> open at `first_program`, with `pages` valid pages programmed.
  void open(BlockNumber block, HostTime first_program, std::uint32_t pages) {
    assert(pages > 0 && pages <= pages_per_block());
    table.transition(block, BlockState::open, BlockKind::cold_data);
    table.set_first_program_time(block, first_program);
    for (std::uint32_t i = 0; i < pages; ++i) table.mark_valid(page(block, i));
    programmed_[block.value] = pages;
    invalidated_[block.value] = 0;
  }
  // open -> closed: a candidate from now on.
  void close(BlockNumber block) {
    table.transition(block, BlockState::closed);
    policy->block_closed(block);
  }
  // A full block, programmed at `first_program`, closed.
  void fill(BlockNumber block, HostTime first_program) {
    open(block, first_program, pages_per_block());
    close(block);
  }
  // The block's oldest valid page becomes stale at `now`, `count` times.
  void invalidate(BlockNumber block, HostTime now, std::uint32_t count = 1) {
    for (std::uint32_t i = 0; i < count; ++i) {
      assert(invalidated_[block.value] < programmed_[block.value]);
      const std::uint32_t before = table.mark_invalid(page(block, invalidated_[block.value]++), now);
      policy->page_invalidated(block, before);
    }
  }
  // The victim's life after selection: no longer a candidate, its valid pages relocated (made
  // stale here, the policy told as the FTL would), erased.
  void collect(BlockNumber block, HostTime now) {
    policy->block_removed(block);
    invalidate(block, now, valid(block));
    table.transition(block, BlockState::free);
  }

  CountingBlockTable table;
  std::unique_ptr<GcPolicy> policy;

 private:
  Ppn page(BlockNumber block, std::uint32_t index) const {
    return Ppn(block.value * pages_per_block() + index);
  }

  std::vector<std::uint32_t> programmed_;
  std::vector<std::uint32_t> invalidated_;
};

inline BlockNumber B(std::uint64_t n) { return BlockNumber(n); }

// The policy's next victim as a plain number, -1 for none: Catch prints it on failure.
inline std::int64_t victim(GcRig& rig, HostTime now) {
  const std::optional<BlockNumber> block = rig.policy->select_victim(now);
  return block ? static_cast<std::int64_t>(block->value) : -1;
}

}  // namespace flashdir::ftl::testing
