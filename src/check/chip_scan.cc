#include "chip_scan.h"

#include <algorithm>
#include <vector>

namespace flashdir {

Status scan_chip(NandChip& chip, ChipScanSummary& summary, const std::function<void(BlockDamage)>& damaged,
                 const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  const Geometry& g = chip.geometry();
  std::vector<std::uint8_t> data(chip.stores_data() ? g.block_size_bytes() : 0);
  std::vector<std::uint8_t> oob(std::size_t{g.oob_size_bytes} * g.pages_per_block);
  std::uint64_t erase_total = 0;
  summary = ChipScanSummary{};
  summary.blocks = g.block_count;
  summary.erase_count_min = UINT32_MAX;

  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    const BlockNumber block(b);
    const std::uint32_t erases = chip.erase_count(block);
    summary.erase_count_min = std::min(summary.erase_count_min, erases);
    summary.erase_count_max = std::max(summary.erase_count_max, erases);
    erase_total += erases;

    const std::uint32_t programmed = chip.next_page(block);
    if (programmed == 0) ++summary.erased_blocks;
    if (programmed == g.pages_per_block) ++summary.full_blocks;
    if (programmed > 0) {
      const ByteSpan data_run =
          ByteSpan(data).first(chip.stores_data() ? std::size_t{programmed} * g.page_size_bytes : 0);
      const ByteSpan oob_run = ByteSpan(oob).first(std::size_t{programmed} * g.oob_size_bytes);
      FLASHDIR_TRY(chip.read(g.first_page(block), programmed, data_run, oob_run));
      BlockDamage damage{block, programmed, {}};
      for (std::uint32_t i = 0; i < programmed; ++i) {
        ++summary.programmed_pages;
        auto record = format::decode_oob(oob_run.subspan(std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes));
        if (!record.is_ok()) {
          damage.pages.push_back({i, record.status().message()});
        } else if (chip.stores_data() && format::xxh3(data_run.subspan(std::size_t{i} * g.page_size_bytes,
                                                                       g.page_size_bytes)) != record->data_hash) {
          damage.pages.push_back({i, "page data does not match the hash in its OOB record", true});
        } else {
          ++summary.pages_by_kind[static_cast<std::size_t>(record->kind)];
        }
      }
      summary.damaged_pages += damage.pages.size();
      if (!damage.pages.empty()) damaged(std::move(damage));
    }
    if (progress) progress(b + 1, g.block_count);
  }
  summary.erase_count_mean = static_cast<double>(erase_total) / static_cast<double>(g.block_count);
  return Status::ok();
}

}  // namespace flashdir
