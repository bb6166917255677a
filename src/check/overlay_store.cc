#include "overlay_store.h"

#include <algorithm>

namespace flashdir {

OverlayStore::OverlayStore(std::shared_ptr<PageStore> base) : base_(std::move(base)) {}

BlockState OverlayStore::block_state(BlockNumber block) const {
  const auto it = block_states_.find(block.value);
  return it != block_states_.end() ? it->second : base_->block_state(block);
}

Status OverlayStore::set_block_state(BlockNumber block, BlockState state) {
  block_states_[block.value] = state;
  return Status::ok();
}

Status OverlayStore::read_page(Ppn page, ByteSpan data, ByteSpan oob) {
  if (const auto it = pages_.find(page.value); it != pages_.end()) {
    if (!data.empty()) std::copy(it->second.data.begin(), it->second.data.end(), data.begin());
    if (!oob.empty()) std::copy(it->second.oob.begin(), it->second.oob.end(), oob.begin());
    return Status::ok();
  }
  if (discarded_.contains(geometry().block_of(page).value)) {
    // As a discarded block of the base store reads: no valid record, no data.
    std::fill(data.begin(), data.end(), 0);
    std::fill(oob.begin(), oob.end(), 0);
    return Status::ok();
  }
  return base_->read_pages(page, 1, data, oob);
}

Status OverlayStore::read_pages(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) {
  bool touched = false;
  for (std::uint32_t i = 0; i < count && !touched; ++i) {
    const Ppn page = first + i;
    touched = pages_.contains(page.value) || discarded_.contains(geometry().block_of(page).value);
  }
  if (!touched) return base_->read_pages(first, count, data, oob);
  const std::size_t page_bytes = geometry().page_size_bytes;
  const std::size_t oob_bytes = geometry().oob_size_bytes;
  for (std::uint32_t i = 0; i < count; ++i) {
    FLASHDIR_TRY(read_page(first + i, data.empty() ? data : data.subspan(i * page_bytes, page_bytes),
                           oob.empty() ? oob : oob.subspan(i * oob_bytes, oob_bytes)));
  }
  return Status::ok();
}

Status OverlayStore::write_pages(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) {
  const std::size_t page_bytes = geometry().page_size_bytes;
  const std::size_t oob_bytes = geometry().oob_size_bytes;
  for (std::uint32_t i = 0; i < count; ++i) {
    Page& page = pages_[(first + i).value];
    // A program without data (metadata-only chips) reads back as zeros, as the base stores do.
    page.data.assign(page_bytes, 0);
    if (!data.empty()) {
      const auto bytes = data.subspan(i * page_bytes, page_bytes);
      std::copy(bytes.begin(), bytes.end(), page.data.begin());
    }
    const auto record = oob.subspan(i * oob_bytes, oob_bytes);
    page.oob.assign(record.begin(), record.end());
  }
  return Status::ok();
}

Status OverlayStore::discard_block(BlockNumber block) {
  discarded_.insert(block.value);
  const Geometry& g = geometry();
  for (std::uint32_t i = 0; i < g.pages_per_block; ++i) pages_.erase(g.page_at(block, i).value);
  return Status::ok();
}

}  // namespace flashdir
