// Where everything lives on the chip and how large the logical space is (doc/ftl.md).
//
//   blocks [0, slot_blocks)               checkpoint slot 0
//   blocks [slot_blocks, 2*slot_blocks)   checkpoint slot 1
//   the rest                              the pool: data and translation blocks alike
//
// Logical pages = (pool - frontiers - GC reserve) blocks, times pages per block, less
// over-provisioning, less the translation pages that map them. Keeping that many blocks out of
// the logical space guarantees GC always finds a victim with an invalid page.
#pragma once

#include <cstdint>

#include "flashdir/geometry.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir::ftl {

inline constexpr std::uint32_t kFrontierCount = 4;       // hot, cold, GC, translation
inline constexpr std::uint32_t kHostFrontierCount = 2;   // hot, cold
inline constexpr std::uint32_t kGcReserveBlocks = 3;     // free blocks only GC and translation writes may take
inline constexpr std::uint32_t kMappingEntryBytes = 4;   // one u32 PPN per LPN in a translation page
// A page failing verification is read this many times in all before it counts as damaged: a
// bit flip may be transient (host reads, GC, recovery's scan alike).
inline constexpr int kReadAttempts = 3;

struct FtlLayout {
  Geometry geometry;
  std::uint16_t overprovision_permille = 0;
  std::uint64_t logical_pages = 0;
  std::uint32_t entries_per_translation_page = 0;
  std::uint64_t translation_pages = 0;
  std::uint64_t checkpoint_bytes_max = 0;   // the largest checkpoint this layout can produce
  std::uint32_t checkpoint_pages_max = 0;   // ... in pages
  std::uint64_t slot_blocks = 0;            // blocks per checkpoint slot
  std::uint64_t pool_first_block = 0;

  static Result<FtlLayout> compute(const Geometry& geometry, std::uint16_t overprovision_permille);

  std::uint64_t tpn_of(Lpn lpn) const { return lpn.value / entries_per_translation_page; }
  Lpn first_lpn_of_tpn(std::uint64_t tpn) const { return Lpn(tpn * entries_per_translation_page); }
  BlockNumber slot_first_block(int slot) const { return BlockNumber(static_cast<std::uint64_t>(slot) * slot_blocks); }
  bool in_pool(BlockNumber block) const { return block.value >= pool_first_block; }
  std::uint64_t pool_blocks() const { return geometry.block_count - pool_first_block; }
  // The pool less the frontiers and the GC reserve: the blocks data and spare share.
  std::uint64_t usable_blocks() const { return pool_blocks() - kFrontierCount - kGcReserveBlocks; }
  // The translation pages of a logical space as large as the chip.
  std::uint64_t translation_pages_max() const;
  // The least over-provisioning with which GC can always make the room a host request asks
  // for on a full device (doc/ftl.md "Layout"); 7% covers it from 58 usable blocks (33.5 MiB
  // of 512 KiB blocks).
  std::uint16_t minimum_overprovision_permille() const;
};

// Upper bound of a checkpoint's encoded size for a chip of `block_count` blocks mapping
// `translation_pages` translation pages (checkpoint.cc encodes within it).
std::uint64_t checkpoint_bytes_bound(const Geometry& geometry, std::uint64_t translation_pages);

}  // namespace flashdir::ftl
