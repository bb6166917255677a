// Frontiers, programming, invalidation, erasing and the free list: how the FTL spends and
// recovers physical space.
#include <algorithm>
#include <cassert>
#include <fmt/format.h>

#include "flashdir/format.h"
#include "ftl_core.h"

namespace flashdir::ftl {

BlockKind block_kind_of(Stream stream) {
  switch (stream) {
    case Stream::hot: return BlockKind::hot_data;
    case Stream::cold: return BlockKind::cold_data;
    case Stream::gc:
    case Stream::consolidation: return BlockKind::gc_data;
    case Stream::translation: return BlockKind::translation;
  }
  return BlockKind::none;
}

namespace {

const char* stream_name(Stream stream) {
  switch (stream) {
    case Stream::hot: return "hot";
    case Stream::cold: return "cold";
    case Stream::gc: return "GC";
    case Stream::translation: return "translation";
    case Stream::consolidation: return "consolidation";
  }
  return "?";
}

}  // namespace

Status FtlCore::note_chip_change() {
  if (!marker_pending_) return Status::ok();
  if (Status s = slots_.write_marker(checkpoint_slot_, checkpoint_generation_, checkpoint_pages_, next_sequence_);
      !s.is_ok()) {
    return fail(s);
  }
  marker_pending_ = false;
  return Status::ok();
}

Result<BlockNumber> FtlCore::open_frontier(Stream stream) {
  const auto index = static_cast<std::size_t>(stream);
  if (frontiers_[index]) return *frontiers_[index];
  if (free_blocks_.empty()) {
    return Status::no_space(fmt::format("no free block left for the {} frontier", stream_name(stream)));
  }
  const BlockNumber block(free_blocks_.top().second);
  free_blocks_.pop();
  assert(chip_.next_page(block) == 0 && "a free block must be erased");
  blocks_.transition(block, BlockState::open, block_kind_of(stream));
  frontiers_[index] = block;
  return block;
}

void FtlCore::close_block(BlockNumber block) {
  blocks_.transition(block, BlockState::closed);
  policy_->block_closed(block);
}

Status FtlCore::program(std::span<const PageToProgram> pages, std::span<Ppn> placed) {
  assert(placed.size() == pages.size());
  FLASHDIR_TRY(note_chip_change());
  const Geometry& g = layout_.geometry;
  // Scratch, reused: no allocation per request. They only grow (resizing between runs with and
  // without data would zero a page each time), so the runs use their first bytes.
  std::vector<std::uint8_t>& data_buffer = program_data_;
  std::vector<std::uint8_t>& oob_buffer = program_oobs_;
  for (std::size_t i = 0; i < pages.size();) {
    const Stream stream = pages[i].stream;
    auto block = open_frontier(stream);
    if (!block.is_ok()) return block.status();
    const std::uint32_t next = chip_.next_page(*block);
    const bool with_data = !pages[i].data.empty();
    std::size_t n = 1;
    while (i + n < pages.size() && next + n < g.pages_per_block && pages[i + n].stream == stream &&
           pages[i + n].data.empty() == !with_data) {
      ++n;
    }
    // A single page (a translation page, a checkpoint page), or a run whose pages lie one after
    // another in memory (a host write that bypasses the device RAM), goes to the chip from its
    // own bytes; any other run is gathered into one buffer.
    bool gather = false;
    for (std::size_t k = i + 1; with_data && k < i + n && !gather; ++k)
      gather = pages[k].data.data() != pages[k - 1].data.data() + pages[k - 1].data.size();
    if (gather && data_buffer.size() < n * g.page_size_bytes) data_buffer.resize(n * g.page_size_bytes);
    if (oob_buffer.size() < n * g.oob_size_bytes) oob_buffer.resize(n * g.oob_size_bytes);
    const ByteSpan data = gather ? ByteSpan(data_buffer).first(n * g.page_size_bytes) : ByteSpan();
    const ByteSpan oobs = ByteSpan(oob_buffer).first(n * g.oob_size_bytes);  // every byte is written below
    for (std::size_t k = 0; k < n; ++k) {
      const PageToProgram& page = pages[i + k];
      format::OobRecord record;
      record.kind = page.kind;
      record.aux = page.kind == format::PageKind::data ? static_cast<std::uint32_t>(stream) : 0;
      record.logical_number = page.logical_number;
      record.sequence = next_sequence_++;
      record.version = page.version;
      if (with_data) {
        if (gather) {
          std::copy(page.data.begin(), page.data.end(), data.begin() + static_cast<std::ptrdiff_t>(k * g.page_size_bytes));
        }
        record.data_hash = format::xxh3(page.data);
      }
      format::encode_oob(record, oobs.subspan(k * g.oob_size_bytes, g.oob_size_bytes));
    }
    const Ppn first = g.page_at(*block, next);
    const ConstByteSpan run_data =
        with_data && !gather ? ConstByteSpan(pages[i].data.data(), n * g.page_size_bytes) : ConstByteSpan(data);
    if (Status s = chip_.program(first, static_cast<std::uint32_t>(n), run_data, oobs); !s.is_ok()) return fail(s);
    if (next == 0) blocks_.set_first_program_time(*block, host_time_);
    for (std::size_t k = 0; k < n; ++k) {
      blocks_.mark_valid(first + k);
      placed[i + k] = first + k;
    }
    programs_since_checkpoint_ += n;
    if (next + n == g.pages_per_block) {
      frontiers_[static_cast<std::size_t>(stream)].reset();
      close_block(*block);
    }
    i += n;
  }
  return Status::ok();
}

std::uint64_t FtlCore::blocks_needed(Stream stream, std::uint64_t pages) const {
  const std::uint32_t P = layout_.geometry.pages_per_block;
  const auto& frontier = frontiers_[static_cast<std::size_t>(stream)];
  const std::uint64_t room = frontier ? P - chip_.next_page(*frontier) : 0;
  return pages <= room ? 0 : (pages - room + P - 1) / P;
}

void FtlCore::invalidate(Ppn page) {
  const BlockNumber block = layout_.geometry.block_of(page);
  const std::uint32_t before = blocks_.mark_invalid(page, host_time_);
  policy_->page_invalidated(block, before);
}

void FtlCore::add_free_block(BlockNumber block) {
  free_blocks_.emplace(chip_.erase_count(block), block.value);
}

Status FtlCore::erase_block(BlockNumber block) {
  assert(blocks_.info(block).valid_pages == 0);
  if (blocks_with_unpersisted_trims_.count(block.value) != 0) FLASHDIR_TRY(persist_trims());
  FLASHDIR_TRY(note_chip_change());
  if (Status s = chip_.erase(block); !s.is_ok()) return fail(s);
  blocks_.transition(block, BlockState::free);
  add_free_block(block);
  return Status::ok();
}

std::uint64_t FtlCore::translation_blocks_pending(TranslationRoom room) const {
  // The page scheme's map stays in RAM: only flushes and checkpoints write it back.
  if (room == TranslationRoom::evictable && options_.mapping == format::MappingScheme::page) return 0;
  return blocks_needed(Stream::translation, ram_->dirty_translation_pages());
}

Status FtlCore::ensure_free_blocks(std::uint64_t needed, TranslationRoom room) {
  if (in_gc_) return Status::ok();  // GC's own writes draw on the reserve
  // Dirty translation pages will take free blocks when written back: count them as already
  // spent. GC's relocations dirty more of them, so the target is recomputed after every
  // collection.
  const auto target = [&] { return kGcReserveBlocks + needed + translation_blocks_pending(room); };
  if (free_blocks() >= target()) return Status::ok();
  in_gc_ = true;
  // Each collection frees a block; bound the attempts so a full device fails instead of
  // spinning (it cannot happen while the logical space leaves the reserve layout.cc keeps).
  const std::uint64_t max_attempts = 2 * layout_.pool_blocks() + 16;
  Status status;
  for (std::uint64_t attempt = 0; free_blocks() < target() && status.is_ok(); ++attempt) {
    const auto victim = policy_->select_victim(host_time_);
    if (!victim || attempt == max_attempts) {
      status = Status::no_space(fmt::format(
          "garbage collection cannot free {} blocks ({} free, {} open, {} closed, {})", target(), free_blocks(),
          blocks_.count(BlockState::open), blocks_.count(BlockState::closed),
          victim ? fmt::format("no progress after {} collections", attempt) : std::string("no victim left")));
      break;
    }
    status = collect(*victim);
  }
  in_gc_ = false;
  // The run's relocations may have loaded mapping state beyond the RAM budget; the request
  // that called for the space settles it (FtlCore::settle), batched per translation page.
  return status;
}

}  // namespace flashdir::ftl
