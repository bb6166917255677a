// Multi-LRI (least-recently invalidated) lists, papers/dual-greedy.txt section III-A: level i
// holds the indexed blocks that have exactly i valid pages, i in [0, pages_per_block]. A block
// enters at the tail of its level; when it loses a valid page it moves to the tail of the level
// below, so every list runs from least to most recently invalidated, head first.
//
// The lists are intrusive: prev/next links and the level live in arrays indexed by block number,
// so inserting, removing and moving a block cost O(1) and nothing is allocated after
// construction. A bitmap of non-empty levels finds the lowest non-empty level at or above a
// given one in O(pages_per_block / 64) word reads, whatever the number of blocks.
//
// The structure knows nothing of the BlockTable: callers say which level a block belongs to.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "flashdir/types.h"

namespace flashdir::ftl {

class LriLists {
 public:
  LriLists(std::uint64_t block_count, std::uint32_t pages_per_block);

  std::uint64_t block_count() const { return level_of_.size(); }
  // Levels are 0 .. pages_per_block inclusive.
  std::uint32_t level_count() const { return static_cast<std::uint32_t>(head_.size()); }

  bool contains(BlockNumber block) const { return level_of_[block.value] != kNotIndexed; }
  // The level of an indexed block.
  std::uint32_t level_of(BlockNumber block) const;

  // Appends a block that is not indexed to the tail of `level`.
  void insert_tail(BlockNumber block, std::uint32_t level);
  // Unlinks an indexed block.
  void remove(BlockNumber block);
  // An indexed block at level i > 0 lost a valid page: moves it to the tail of level i - 1.
  void move_down(BlockNumber block);

  std::optional<BlockNumber> head(std::uint32_t level) const;
  std::optional<BlockNumber> tail(std::uint32_t level) const;
  // The block after (towards the tail) / before an indexed block in its list.
  std::optional<BlockNumber> next(BlockNumber block) const;
  std::optional<BlockNumber> prev(BlockNumber block) const;
  std::uint64_t size(std::uint32_t level) const { return size_[level]; }
  bool empty(std::uint32_t level) const { return size_[level] == 0; }

  // The lowest non-empty level >= `from`, if any (`from` may be level_count()).
  std::optional<std::uint32_t> lowest_nonempty_level(std::uint32_t from) const;

  // A level's blocks, head first. O(length): for tests and diagnostics only.
  std::vector<BlockNumber> blocks_at(std::uint32_t level) const;

 private:
  static constexpr std::uint64_t kNil = std::numeric_limits<std::uint64_t>::max();
  static constexpr std::uint32_t kNotIndexed = std::numeric_limits<std::uint32_t>::max();

  static std::optional<BlockNumber> as_block(std::uint64_t link) {
    if (link == kNil) return std::nullopt;
    return BlockNumber(link);
  }
  void link_tail(std::uint64_t block, std::uint32_t level);
  void unlink(std::uint64_t block);

  // Per block.
  std::vector<std::uint64_t> prev_;
  std::vector<std::uint64_t> next_;
  std::vector<std::uint32_t> level_of_;
  // Per level.
  std::vector<std::uint64_t> head_;
  std::vector<std::uint64_t> tail_;
  std::vector<std::uint64_t> size_;
  std::vector<std::uint64_t> nonempty_bits_;  // bit i set iff level i is non-empty
};

}  // namespace flashdir::ftl
