// Reading and writing checkpoints in their two slots.
#include <array>
#include <fmt/format.h>

#include "checkpoint.h"
#include "flashdir/format.h"

namespace flashdir::ftl {
namespace {

// Safe for any `a`: checkpoint sizes come from the medium.
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// The verified OOB record of a page, or why it has none.
Result<format::OobRecord> verified_record(ConstByteSpan data, ConstByteSpan oob) {
  auto record = format::decode_oob(oob);
  if (!record.is_ok()) return record.status();
  if (!data.empty() && format::xxh3(data) != record->data_hash) {
    return Status::corruption("page data does not match its hash");
  }
  return record;
}

// The verified record of `page`, already read into (data, oob) once, reading it again while it
// fails: a bit flip may be transient, and a slot taken for torn falls back to an older one.
Result<format::OobRecord> verified_record(NandChip& chip, Ppn page, ByteSpan data, ByteSpan oob) {
  for (int attempt = 1;; ++attempt) {
    auto record = verified_record(ConstByteSpan(data), ConstByteSpan(oob));
    if (record.is_ok() || attempt == kReadAttempts) return record;
    FLASHDIR_TRY(chip.read(page, 1, data, oob));
  }
}

}  // namespace

Result<CheckpointSlots::Loaded> CheckpointSlots::load(int slot) {
  const Geometry& g = layout_.geometry;
  const std::uint32_t capacity = static_cast<std::uint32_t>(layout_.slot_blocks * g.pages_per_block);
  if (!chip_.is_programmed(page(slot, 0))) return Status::not_found("empty");

  std::vector<std::uint8_t> first(g.page_size_bytes), oob(g.oob_size_bytes);
  FLASHDIR_TRY(chip_.read(page(slot, 0), 1, first, oob));
  auto record = verified_record(chip_, page(slot, 0), first, oob);
  if (!record.is_ok()) return record.status().with_context("page 0");
  if (record->kind != format::PageKind::checkpoint || record->aux != 0) {
    return Status::corruption("page 0 is not the first page of a checkpoint");
  }
  // The header in page 0 says how long the checkpoint is; decode_checkpoint checks it again.
  constexpr std::size_t kSizeOffset = 72;
  std::uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | first[kSizeOffset + static_cast<std::size_t>(i)];
  const std::uint64_t pages = ceil_div(size, g.page_size_bytes);
  if (size < kSizeOffset + 8 || pages + 1 > capacity) {
    return Status::corruption(fmt::format("checkpoint claims {} bytes, more than its slot holds", size));
  }
  const auto count = static_cast<std::uint32_t>(pages);
  std::vector<std::uint8_t> bytes(std::size_t{count} * g.page_size_bytes);
  std::vector<std::uint8_t> oobs(std::size_t{count} * g.oob_size_bytes);
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!chip_.is_programmed(page(slot, i))) return Status::corruption(fmt::format("page {} is missing", i));
  }
  FLASHDIR_TRY(chip_.read(page(slot, 0), count, bytes, oobs));
  Loaded loaded;
  loaded.slot = slot;
  loaded.pages = count;
  for (std::uint32_t i = 0; i < count; ++i) {
    auto r = verified_record(chip_, page(slot, i), ByteSpan(bytes).subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes),
                             ByteSpan(oobs).subspan(std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes));
    if (!r.is_ok()) return r.status().with_context(fmt::format("page {}", i));
    if (r->kind != format::PageKind::checkpoint || r->aux != i || r->logical_number != record->logical_number) {
      return Status::corruption(fmt::format("page {} belongs to another checkpoint", i));
    }
    loaded.highest_sequence = std::max(loaded.highest_sequence, r->sequence);
  }
  auto state = decode_checkpoint(ConstByteSpan(bytes).first(size), layout_);
  if (!state.is_ok()) return state.status();
  if (state->generation != record->logical_number) {
    return Status::corruption("checkpoint generation differs from its pages' records");
  }
  loaded.state = std::move(state).value();

  const Ppn marker = page(slot, count);
  if (chip_.is_programmed(marker)) {
    // Anything programmed there, even a torn marker, means the state moved on.
    loaded.marked = true;
    FLASHDIR_TRY(chip_.read(marker, 1, {}, oob));
    if (auto m = format::decode_oob(oob); m.is_ok()) loaded.highest_sequence = std::max(loaded.highest_sequence, m->sequence);
  }
  return loaded;
}

std::uint64_t CheckpointSlots::claimed_generation(int slot) {
  if (!chip_.is_programmed(page(slot, 0))) return 0;
  std::vector<std::uint8_t> oob(layout_.geometry.oob_size_bytes);
  if (!chip_.read(page(slot, 0), 1, {}, oob).is_ok()) return 0;
  auto record = format::decode_oob(oob);
  return record.is_ok() && record->kind == format::PageKind::checkpoint ? record->logical_number : 0;
}

Result<CheckpointSlots::Loaded> CheckpointSlots::load_newest(std::vector<std::string>* problems, SlotsRead read) {
  std::array<int, 2> order{0, 1};
  if (claimed_generation(1) > claimed_generation(0)) std::swap(order[0], order[1]);
  std::optional<Loaded> best;
  for (int slot : order) {
    auto loaded = load(slot);
    if (!loaded.is_ok()) {
      if (problems != nullptr && loaded.status().code() != StatusCode::not_found) {
        problems->push_back(fmt::format("checkpoint slot {}: {}", slot, loaded.status().message()));
      }
      if (loaded.status().code() == StatusCode::power_lost || loaded.status().code() == StatusCode::io_error) {
        return loaded.status();
      }
      continue;
    }
    if (!best || loaded->state.generation > best->state.generation) best = std::move(loaded).value();
    if (read == SlotsRead::newest_first) break;
  }
  if (!best) return Status::not_found("no valid checkpoint in either slot");
  return std::move(*best);
}

Result<std::uint32_t> CheckpointSlots::write(int slot, const CheckpointState& state, std::uint64_t& next_sequence) {
  const Geometry& g = layout_.geometry;
  std::vector<std::uint8_t> bytes = encode_checkpoint(state, layout_);
  const auto pages = static_cast<std::uint32_t>(ceil_div(bytes.size(), g.page_size_bytes));
  bytes.resize(std::size_t{pages} * g.page_size_bytes, 0);
  for (std::uint64_t b = 0; b < layout_.slot_blocks; ++b) {
    const BlockNumber block(layout_.slot_first_block(slot).value + b);
    if (chip_.next_page(block) > 0) FLASHDIR_TRY(chip_.erase(block));
  }
  std::vector<std::uint8_t> oobs(std::size_t{pages} * g.oob_size_bytes);
  for (std::uint32_t i = 0; i < pages; ++i) {
    format::OobRecord record;
    record.kind = format::PageKind::checkpoint;
    record.aux = i;
    record.logical_number = state.generation;
    record.sequence = next_sequence++;
    record.version = state.next_sequence;
    record.data_hash = format::xxh3(ConstByteSpan(bytes).subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes));
    format::encode_oob(record, ByteSpan(oobs).subspan(std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes));
  }
  FLASHDIR_TRY(chip_.program(page(slot, 0), pages, bytes, oobs));
  FLASHDIR_TRY(chip_.sync());
  return pages;
}

Status CheckpointSlots::write_marker(int slot, std::uint64_t generation, std::uint32_t pages,
                                     std::uint64_t& next_sequence) {
  const Geometry& g = layout_.geometry;
  std::vector<std::uint8_t> data(g.page_size_bytes, 0), oob(g.oob_size_bytes);
  format::OobRecord record;
  record.kind = format::PageKind::checkpoint;
  record.aux = kMarkerPageIndex;
  record.logical_number = generation;
  record.sequence = next_sequence++;
  record.data_hash = format::xxh3(data);
  format::encode_oob(record, oob);
  return chip_.program(page(slot, pages), 1, data, oob);
}

}  // namespace flashdir::ftl
