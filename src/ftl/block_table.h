// Per-block state of the FTL: lifecycle, what a block holds, how many of its pages are valid,
// and the two timestamps Dual Greedy needs. Plus the page-validity bitmap. Owned by the FTL;
// GC policies read it.
//
// Lifecycle (one checked transition function, `transition`):
//
//   reserved                              checkpoint slots; never change
//   free ──open──▶ open ──close──▶ closed ──erase──▶ free
//
// An open block is a write frontier; a closed block is a GC candidate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "flashdir/types.h"

namespace flashdir::ftl {

// Simulated time in host page writes (Dual Greedy's clock).
using HostTime = std::uint64_t;

enum class BlockState : std::uint8_t { free = 0, open = 1, closed = 2, reserved = 3 };

// What a block holds, which is also the write stream that filled it. Stored in checkpoints:
// values are permanent.
enum class BlockKind : std::uint8_t {
  none = 0,         // free or reserved
  hot_data = 1,     // host writes classified hot
  cold_data = 2,    // other host writes
  gc_data = 3,      // data relocated by GC or consolidated into block mapping
  translation = 4,  // translation pages
};

const char* block_state_name(BlockState state);
const char* block_kind_name(BlockKind kind);
inline bool holds_data(BlockKind kind) {
  return kind == BlockKind::hot_data || kind == BlockKind::cold_data || kind == BlockKind::gc_data;
}

// The pages of `block` set in a validity bitmap (one bit per physical page).
inline std::uint32_t valid_pages_in(const std::vector<std::uint64_t>& validity, std::uint64_t block,
                                    std::uint32_t pages_per_block) {
  std::uint32_t valid = 0;
  for (std::uint64_t p = block * pages_per_block; p < (block + 1) * pages_per_block; ++p) {
    valid += static_cast<std::uint32_t>((validity[p / 64] >> (p % 64)) & 1);
  }
  return valid;
}

struct BlockInfo {
  BlockState state = BlockState::free;
  BlockKind kind = BlockKind::none;
  std::uint32_t valid_pages = 0;
  HostTime first_program_time = 0;      // when its first page was programmed
  HostTime last_invalidation_time = 0;  // when a valid page of it last became invalid
};

class BlockTable {
 public:
  BlockTable(std::uint64_t block_count, std::uint32_t pages_per_block);
  virtual ~BlockTable() = default;

  std::uint64_t block_count() const { return blocks_.size(); }
  std::uint32_t pages_per_block() const { return pages_per_block_; }
  // Virtual so that a test can count the blocks a GC policy reads (tests/gc/gc_rig.h); the
  // FTL's own calls on its BlockTable member are resolved statically.
  virtual const BlockInfo& info(BlockNumber block) const { return blocks_[block.value]; }

  bool is_valid(Ppn page) const { return (bits_[page.value / 64] >> (page.value % 64)) & 1; }

  // Lifecycle; asserts that the transition is one of those drawn above.
  void transition(BlockNumber block, BlockState to, BlockKind kind = BlockKind::none);
  // A page of `block` just programmed holds live data (or a live translation page).
  void mark_valid(Ppn page);
  // A valid page became stale; returns the valid count before.
  std::uint32_t mark_invalid(Ppn page, HostTime now);
  void set_first_program_time(BlockNumber block, HostTime t) { blocks_[block.value].first_program_time = t; }
  // Restores a block's record wholesale (checkpoint load, recovery).
  void restore(BlockNumber block, const BlockInfo& info);
  // Clears every validity bit and count (before recovery recomputes them).
  void clear_validity();
  // Recomputes every block's valid count from the bitmap (replaced whole by recovery).
  void recount_valid_pages();

  std::uint64_t count(BlockState state) const { return state_counts_[static_cast<int>(state)]; }
  const std::vector<std::uint64_t>& validity_words() const { return bits_; }
  std::vector<std::uint64_t>& mutable_validity_words() { return bits_; }

 private:
  std::uint32_t pages_per_block_;
  std::vector<BlockInfo> blocks_;
  std::vector<std::uint64_t> bits_;  // one bit per physical page
  std::uint64_t state_counts_[4] = {};
};

}  // namespace flashdir::ftl
