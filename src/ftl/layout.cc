#include "layout.h"

#include <algorithm>
#include <fmt/format.h>

namespace flashdir::ftl {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

Result<FtlLayout> FtlLayout::compute(const Geometry& geometry, std::uint16_t overprovision_permille) {
  FLASHDIR_TRY(geometry.validate());
  if (overprovision_permille >= 1000) {
    return Status::invalid_argument(
        fmt::format("over-provisioning {} per mille is not below 1000", overprovision_permille));
  }
  // Translation pages hold 32-bit PPNs; one value is the "unmapped" mark.
  if (geometry.page_count() >= 0xFFFFFFFFULL) {
    return Status::invalid_argument(fmt::format(
        "a chip of {} pages is too large for 32-bit mapping entries; use larger pages", geometry.page_count()));
  }
  FtlLayout layout;
  layout.geometry = geometry;
  layout.overprovision_permille = overprovision_permille;
  layout.entries_per_translation_page = geometry.page_size_bytes / kMappingEntryBytes;
  const std::uint64_t P = geometry.pages_per_block;

  // Size the checkpoint slots for the most translation pages any logical size could need.
  layout.checkpoint_bytes_max = checkpoint_bytes_bound(geometry, layout.translation_pages_max());
  layout.checkpoint_pages_max =
      static_cast<std::uint32_t>(ceil_div(layout.checkpoint_bytes_max, geometry.page_size_bytes));
  // One more page for the marker written when the checkpointed state starts to change.
  layout.slot_blocks = ceil_div(layout.checkpoint_pages_max + 1, P);
  layout.pool_first_block = 2 * layout.slot_blocks;
  if (layout.pool_first_block + kFrontierCount + kGcReserveBlocks + 2 > geometry.block_count) {
    return Status::invalid_argument(fmt::format(
        "{} blocks are too few for an FTL: checkpoints take {}, frontiers and the GC reserve {}, and data "
        "needs at least 2",
        geometry.block_count, layout.pool_first_block, kFrontierCount + kGcReserveBlocks));
  }
  const std::uint64_t usable_blocks = layout.usable_blocks();
  const std::uint64_t usable_pages = usable_blocks * P * (1000 - overprovision_permille) / 1000;
  // Translation pages live in the same pool: L + ceil(L / E) <= usable.
  const std::uint64_t E = layout.entries_per_translation_page;
  std::uint64_t logical = usable_pages * E / (E + 1);
  while (logical > 0 && logical + ceil_div(logical, E) > usable_pages) --logical;
  layout.logical_pages = logical;
  layout.translation_pages = ceil_div(logical, E);
  if (layout.logical_pages == 0) {
    return Status::invalid_argument(fmt::format("no logical space left on {} blocks with {} per mille spare",
                                                geometry.block_count, overprovision_permille));
  }
  return layout;
}

std::uint64_t FtlLayout::translation_pages_max() const {
  return ceil_div(geometry.page_count(), entries_per_translation_page);
}

std::uint16_t FtlLayout::minimum_overprovision_permille() const {
  // A host request asks GC for the reserve, a block for each host frontier its pages may go to
  // (program_host_chunk: at most a block's worth a call, so one each) and the blocks its dirty
  // translation pages will take. GC frees at most the reserve plus the spare blocks, and only
  // in the limit of perfect compaction, so one block more keeps it from needing every one.
  const std::uint64_t spare_blocks = kHostFrontierCount + ceil_div(translation_pages_max(), geometry.pages_per_block) + 1;
  return static_cast<std::uint16_t>(std::min<std::uint64_t>(ceil_div(spare_blocks * 1000, usable_blocks()), 999));
}

}  // namespace flashdir::ftl
