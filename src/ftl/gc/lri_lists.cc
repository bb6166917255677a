#include "lri_lists.h"

#include <bit>
#include <cassert>

namespace flashdir::ftl {

LriLists::LriLists(std::uint64_t block_count, std::uint32_t pages_per_block)
    : prev_(block_count, kNil),
      next_(block_count, kNil),
      level_of_(block_count, kNotIndexed),
      head_(std::uint64_t{pages_per_block} + 1, kNil),
      tail_(std::uint64_t{pages_per_block} + 1, kNil),
      size_(std::uint64_t{pages_per_block} + 1, 0),
      nonempty_bits_((std::uint64_t{pages_per_block} + 1 + 63) / 64, 0) {
  assert(pages_per_block > 0 && pages_per_block < kNotIndexed);
}

std::uint32_t LriLists::level_of(BlockNumber block) const {
  assert(contains(block) && "block is not in the lists");
  return level_of_[block.value];
}

void LriLists::insert_tail(BlockNumber block, std::uint32_t level) {
  assert(block.value < block_count());
  assert(!contains(block) && "block is already in the lists");
  assert(level < level_count());
  link_tail(block.value, level);
}

void LriLists::remove(BlockNumber block) {
  assert(contains(block) && "block is not in the lists");
  unlink(block.value);
}

void LriLists::move_down(BlockNumber block) {
  const std::uint32_t level = level_of(block);
  assert(level > 0 && "a block at level 0 has no valid page to lose");
  unlink(block.value);
  link_tail(block.value, level - 1);
}

std::optional<BlockNumber> LriLists::head(std::uint32_t level) const {
  assert(level < level_count());
  return as_block(head_[level]);
}

std::optional<BlockNumber> LriLists::tail(std::uint32_t level) const {
  assert(level < level_count());
  return as_block(tail_[level]);
}

std::optional<BlockNumber> LriLists::next(BlockNumber block) const {
  assert(contains(block));
  return as_block(next_[block.value]);
}

std::optional<BlockNumber> LriLists::prev(BlockNumber block) const {
  assert(contains(block));
  return as_block(prev_[block.value]);
}

std::optional<std::uint32_t> LriLists::lowest_nonempty_level(std::uint32_t from) const {
  if (from >= level_count()) return std::nullopt;
  std::uint64_t word_index = from / 64;
  // Mask off the levels below `from` in the first word.
  std::uint64_t word = nonempty_bits_[word_index] & (~std::uint64_t{0} << (from % 64));
  while (word == 0) {
    if (++word_index == nonempty_bits_.size()) return std::nullopt;
    word = nonempty_bits_[word_index];
  }
  return static_cast<std::uint32_t>(word_index * 64 + static_cast<std::uint64_t>(std::countr_zero(word)));
}

std::vector<BlockNumber> LriLists::blocks_at(std::uint32_t level) const {
  std::vector<BlockNumber> blocks;
  for (std::uint64_t b = head_[level]; b != kNil; b = next_[b]) blocks.emplace_back(b);
  return blocks;
}

void LriLists::link_tail(std::uint64_t block, std::uint32_t level) {
  prev_[block] = tail_[level];
  next_[block] = kNil;
  if (tail_[level] == kNil) {
    head_[level] = block;
    nonempty_bits_[level / 64] |= std::uint64_t{1} << (level % 64);
  } else {
    next_[tail_[level]] = block;
  }
  tail_[level] = block;
  level_of_[block] = level;
  ++size_[level];
}

void LriLists::unlink(std::uint64_t block) {
  const std::uint32_t level = level_of_[block];
  if (prev_[block] == kNil) {
    head_[level] = next_[block];
  } else {
    next_[prev_[block]] = next_[block];
  }
  if (next_[block] == kNil) {
    tail_[level] = prev_[block];
  } else {
    prev_[next_[block]] = prev_[block];
  }
  prev_[block] = kNil;
  next_[block] = kNil;
  level_of_[block] = kNotIndexed;
  if (--size_[level] == 0) nonempty_bits_[level / 64] &= ~(std::uint64_t{1} << (level % 64));
}

}  // namespace flashdir::ftl
