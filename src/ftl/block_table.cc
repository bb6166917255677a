#include "block_table.h"

#include <cassert>

namespace flashdir::ftl {

const char* block_state_name(BlockState state) {
  switch (state) {
    case BlockState::free: return "free";
    case BlockState::open: return "open";
    case BlockState::closed: return "closed";
    case BlockState::reserved: return "reserved";
  }
  return "unknown";
}

const char* block_kind_name(BlockKind kind) {
  switch (kind) {
    case BlockKind::none: return "none";
    case BlockKind::hot_data: return "hot data";
    case BlockKind::cold_data: return "cold data";
    case BlockKind::gc_data: return "gc data";
    case BlockKind::translation: return "translation";
  }
  return "unknown";
}

BlockTable::BlockTable(std::uint64_t block_count, std::uint32_t pages_per_block)
    : pages_per_block_(pages_per_block),
      blocks_(block_count),
      bits_((block_count * pages_per_block + 63) / 64, 0) {
  state_counts_[static_cast<int>(BlockState::free)] = block_count;
}

void BlockTable::transition(BlockNumber block, BlockState to, BlockKind kind) {
  BlockInfo& b = blocks_[block.value];
  [[maybe_unused]] const bool allowed =
      (b.state == BlockState::free && to == BlockState::open && kind != BlockKind::none) ||
      (b.state == BlockState::open && to == BlockState::closed) ||
      (b.state == BlockState::closed && to == BlockState::free) ||
      (b.state == BlockState::free && to == BlockState::reserved);
  assert(allowed && "illegal block state transition");
  --state_counts_[static_cast<int>(b.state)];
  ++state_counts_[static_cast<int>(to)];
  b.state = to;
  if (to == BlockState::open) {
    b.kind = kind;
  } else if (to == BlockState::free || to == BlockState::reserved) {
    assert(b.valid_pages == 0 && "a block with valid pages cannot be freed");
    b = BlockInfo{to, BlockKind::none, 0, 0, 0};
  }
}

void BlockTable::mark_valid(Ppn page) {
  std::uint64_t& word = bits_[page.value / 64];
  const std::uint64_t bit = std::uint64_t{1} << (page.value % 64);
  assert((word & bit) == 0 && "page is already valid");
  word |= bit;
  ++blocks_[page.value / pages_per_block_].valid_pages;
}

std::uint32_t BlockTable::mark_invalid(Ppn page, HostTime now) {
  std::uint64_t& word = bits_[page.value / 64];
  const std::uint64_t bit = std::uint64_t{1} << (page.value % 64);
  assert((word & bit) != 0 && "page is not valid");
  word &= ~bit;
  BlockInfo& b = blocks_[page.value / pages_per_block_];
  assert(b.valid_pages > 0);
  b.last_invalidation_time = now;
  return b.valid_pages--;
}

void BlockTable::restore(BlockNumber block, const BlockInfo& info) {
  --state_counts_[static_cast<int>(blocks_[block.value].state)];
  ++state_counts_[static_cast<int>(info.state)];
  blocks_[block.value] = info;
}

void BlockTable::clear_validity() {
  std::fill(bits_.begin(), bits_.end(), 0);
  for (auto& b : blocks_) b.valid_pages = 0;
}

void BlockTable::recount_valid_pages() {
  for (std::uint64_t b = 0; b < blocks_.size(); ++b) blocks_[b].valid_pages = valid_pages_in(bits_, b, pages_per_block_);
}

}  // namespace flashdir::ftl
