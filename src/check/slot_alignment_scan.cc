#include "slot_alignment_scan.h"

#include <vector>

#include "cache/meta/metadata_store.h"
#include "flashdir/clock.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "ftl/layout.h"

namespace flashdir {

Result<format::SlotAlignment> slot_alignment_on_chip(const std::filesystem::path& image,
                                                     std::uint16_t overprovision_permille) {
  auto store = open_image_store(image, ImageAccess::read_only);
  if (!store.is_ok()) return store.status();
  SimClock clock;
  SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  const Geometry& g = chip.geometry();
  auto ftl_layout = ftl::FtlLayout::compute(g, overprovision_permille);
  if (!ftl_layout.is_ok()) return ftl_layout.status();
  auto packed = cache::SlotLayout::compute(ftl_layout->logical_pages, g.page_size_bytes);
  auto aligned = cache::SlotLayout::compute(ftl_layout->logical_pages, g.page_size_bytes, g.pages_per_block);
  if (!packed.is_ok()) return packed.status();
  if (!aligned.is_ok()) return aligned.status();
  // The LPNs only the packed layout writes (none when its slot 0 begins a logical block too).
  const std::uint64_t first = packed->first_data_lpn;
  const std::uint64_t end = aligned->first_data_lpn;
  // The OOB records alone, a block's programmed pages in one read.
  std::vector<std::uint8_t> oob(std::size_t{g.pages_per_block} * g.oob_size_bytes);
  for (std::uint64_t b = 0; b < g.block_count && first < end; ++b) {
    const std::uint32_t programmed = chip.next_page(BlockNumber(b));
    if (programmed == 0) continue;
    const ByteSpan records(oob.data(), std::size_t{programmed} * g.oob_size_bytes);
    FLASHDIR_TRY(chip.read(g.page_at(BlockNumber(b), 0), programmed, {}, records));
    for (std::uint32_t i = 0; i < programmed; ++i) {
      auto record = format::decode_oob(records.subspan(std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes));
      if (record.is_ok() && record->kind == format::PageKind::data && record->logical_number >= first &&
          record->logical_number < end) {
        return format::SlotAlignment::after_metadata;
      }
    }
  }
  return format::SlotAlignment::logical_block;
}

}  // namespace flashdir
