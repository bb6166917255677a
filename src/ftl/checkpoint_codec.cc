// Encoding of CheckpointState (doc/format.md, "Checkpoint").
#include <cassert>
#include <fmt/format.h>

#include "checkpoint.h"
#include "flashdir/endian.h"
#include "flashdir/format.h"

namespace flashdir::ftl {
namespace {

constexpr std::uint64_t kCheckpointMagic = 0x3154504B48434446ULL;  // "FDCHKPT1" in LE
// Version 2 added the lost-LPN bitmap; version 1 checkpoints are refused.
constexpr std::uint32_t kCheckpointVersion = 2;
constexpr std::size_t kHeaderSize = 96;
constexpr std::size_t kBlockRecordSize = 18;
constexpr std::size_t kHeaderChecksumOffset = 88;

std::uint64_t bitmap_words(const Geometry& g) { return (g.page_count() + 63) / 64; }
std::uint64_t lost_words(std::uint64_t logical_pages) { return (logical_pages + 63) / 64; }

}  // namespace

std::uint64_t checkpoint_bytes_bound(const Geometry& geometry, std::uint64_t translation_pages) {
  // The lost bitmap has a bit per logical page, and there are fewer of those than pages.
  return kHeaderSize + 4 * translation_pages + kBlockRecordSize * geometry.block_count + 8 * bitmap_words(geometry) +
         8 * lost_words(geometry.page_count());
}

std::vector<std::uint8_t> encode_checkpoint(const CheckpointState& state, const FtlLayout& layout) {
  const Geometry& g = layout.geometry;
  assert(state.lost.size() == lost_words(state.logical_pages));
  const std::uint64_t size = kHeaderSize + 4 * state.gtd.size() + kBlockRecordSize * state.blocks.size() +
                             8 * state.validity.size() + 8 * state.lost.size();
  std::vector<std::uint8_t> bytes(size);
  LittleEndianWriter body(ByteSpan(bytes).subspan(kHeaderSize));
  for (std::uint32_t ppn : state.gtd) body.u32(ppn);
  for (const BlockInfo& b : state.blocks) {
    body.u8(static_cast<std::uint8_t>(b.state));
    body.u8(static_cast<std::uint8_t>(b.kind));
    body.u64(b.first_program_time);
    body.u64(b.last_invalidation_time);
  }
  for (std::uint64_t word : state.validity) body.u64(word);
  for (std::uint64_t word : state.lost) body.u64(word);

  LittleEndianWriter h(ByteSpan(bytes).first(kHeaderSize));
  h.u64(kCheckpointMagic);
  h.u32(kCheckpointVersion);
  h.u32(static_cast<std::uint32_t>(kHeaderSize));
  h.u64(state.generation);
  h.u64(state.next_sequence);
  h.u64(state.write_sequence);
  h.u64(state.host_time);
  h.u64(state.logical_pages);
  h.u16(state.overprovision_permille);
  h.u16(0);
  h.u32(static_cast<std::uint32_t>(g.pages_per_block));
  h.u64(state.gtd.size());
  h.u64(size);
  h.u64(format::xxh3(ConstByteSpan(bytes).subspan(kHeaderSize)));
  h.u64(format::xxh3(ConstByteSpan(bytes).first(kHeaderChecksumOffset)));
  return bytes;
}

Result<CheckpointState> decode_checkpoint(ConstByteSpan bytes, const FtlLayout& layout) {
  const Geometry& g = layout.geometry;
  if (bytes.size() < kHeaderSize) return Status::corruption("checkpoint is shorter than its header");
  LittleEndianReader h(bytes.first(kHeaderSize));
  if (h.u64() != kCheckpointMagic) return Status::corruption("checkpoint has a bad magic number");
  if (const auto version = h.u32(); version != kCheckpointVersion) {
    return Status::corruption(fmt::format("checkpoint has format version {}", version));
  }
  if (h.u32() != kHeaderSize) return Status::corruption("checkpoint header has the wrong size");
  CheckpointState state;
  state.generation = h.u64();
  state.next_sequence = h.u64();
  state.write_sequence = h.u64();
  state.host_time = h.u64();
  state.logical_pages = h.u64();
  state.overprovision_permille = h.u16();
  h.skip(2);
  const std::uint32_t pages_per_block = h.u32();
  const std::uint64_t gtd_entries = h.u64();
  const std::uint64_t size = h.u64();
  const std::uint64_t body_checksum = h.u64();
  if (h.u64() != format::xxh3(bytes.first(kHeaderChecksumOffset))) {
    return Status::corruption("checkpoint header checksum mismatch");
  }
  if (pages_per_block != g.pages_per_block) {
    return Status::corruption(fmt::format("checkpoint was written for {} pages per block, the chip has {}",
                                          pages_per_block, g.pages_per_block));
  }
  // Counts are checked against what the slot was sized for before any arithmetic uses them:
  // a damaged count must neither wrap a size computation nor make a table huge.
  if (state.logical_pages == 0 || state.logical_pages > g.page_count()) {
    return Status::corruption(fmt::format("checkpoint records {} logical pages on a chip of {} pages",
                                          state.logical_pages, g.page_count()));
  }
  const std::uint64_t gtd_needed =
      (state.logical_pages + layout.entries_per_translation_page - 1) / layout.entries_per_translation_page;
  if (gtd_entries != gtd_needed) {
    return Status::corruption(fmt::format("checkpoint records {} GTD entries, its {} logical pages need {}",
                                          gtd_entries, state.logical_pages, gtd_needed));
  }
  const std::uint64_t expected = kHeaderSize + 4 * gtd_entries + kBlockRecordSize * g.block_count +
                                 8 * bitmap_words(g) + 8 * lost_words(state.logical_pages);
  if (size != expected || size > bytes.size()) {
    return Status::corruption(fmt::format("checkpoint records {} bytes, its tables need {}", size, expected));
  }
  if (format::xxh3(bytes.subspan(kHeaderSize, size - kHeaderSize)) != body_checksum) {
    return Status::corruption("checkpoint body checksum mismatch");
  }
  LittleEndianReader body(bytes.subspan(kHeaderSize, size - kHeaderSize));
  state.gtd.resize(gtd_entries);
  for (auto& ppn : state.gtd) ppn = body.u32();
  state.blocks.resize(g.block_count);
  for (BlockInfo& b : state.blocks) {
    const auto block_state = body.u8();
    const auto kind = body.u8();
    if (block_state > static_cast<std::uint8_t>(BlockState::reserved) ||
        kind > static_cast<std::uint8_t>(BlockKind::translation)) {
      return Status::corruption("checkpoint holds an unknown block state or kind");
    }
    b.state = static_cast<BlockState>(block_state);
    b.kind = static_cast<BlockKind>(kind);
    b.first_program_time = body.u64();
    b.last_invalidation_time = body.u64();
  }
  state.validity.resize(bitmap_words(g));
  for (auto& word : state.validity) word = body.u64();
  state.lost.resize(lost_words(state.logical_pages));
  for (auto& word : state.lost) word = body.u64();
  for (std::uint64_t block = 0; block < g.block_count; ++block) {
    state.blocks[block].valid_pages = valid_pages_in(state.validity, block, g.pages_per_block);
  }
  return state;
}

Status check_checkpoint_layout(const CheckpointState& state, const FtlLayout& layout, std::string_view layout_source) {
  if (state.overprovision_permille != layout.overprovision_permille) {
    return Status::invalid_argument(fmt::format(
        "over-provisioning differs: checkpoint {} was written with {} per mille, {} {} per mille (the layout "
        "depends on it: {} logical pages against {})",
        state.generation, state.overprovision_permille, layout_source, layout.overprovision_permille,
        state.logical_pages, layout.logical_pages));
  }
  if (state.logical_pages != layout.logical_pages || state.gtd.size() != layout.translation_pages) {
    return Status::invalid_argument(fmt::format(
        "logical pages differ: checkpoint {} describes {} logical pages in {} translation pages, the layout for {} "
        "per mille over-provisioning has {} and {}",
        state.generation, state.logical_pages, state.gtd.size(), layout.overprovision_permille, layout.logical_pages,
        layout.translation_pages));
  }
  return Status::ok();
}

}  // namespace flashdir::ftl
