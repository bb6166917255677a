// The metadata store's part of a restart image (cache/restart_image.h): its RAM entries and
// file numbers as a clean close leaves them, so that the next open need not read and judge
// every metadata page; and the reading of each chunk of entries the first time it is needed.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cache/meta/metadata_store.h"

namespace flashdir::cache {
namespace {

namespace flag = format::metadata_flag;
constexpr std::size_t kEntryImageBytes = 12;  // file number, page number (48 bits), flags, flags on the chip
// Slots a chunk of entries holds, at least: 96 KiB of image, read in one request when the
// first of them is touched.
constexpr std::uint32_t kChunkSlotsAtLeast = 8192;

std::uint32_t chunk_slots_for(const SlotLayout& layout) {
  const std::uint32_t e = layout.entries_per_page;
  return (kChunkSlotsAtLeast + e - 1) / e * e;
}

std::uint32_t chunk_count_for(const SlotLayout& layout, std::uint32_t chunk_slots) {
  return static_cast<std::uint32_t>((std::uint64_t{layout.slot_count} + chunk_slots - 1) / chunk_slots);
}

}  // namespace

Result<std::vector<std::uint8_t>> MetadataStore::save_image(RestartImageWriter& parts) const {
  // Only the state a clean close leaves: nothing in flight, every change and the clean mark on
  // the chip, so that the image and the metadata pages say the same.
  if (!clean_mark_on_chip_ || !unfinished_.empty() || window_.size() != 0 || pending_drops_.size() != 0) {
    return Status::invalid_argument("the metadata store has changes not on the chip");
  }
  FLASHDIR_TRY(check_alive());
  const std::uint32_t chunk_slots = chunk_slots_for(layout_);
  const std::uint32_t chunk_count = chunk_count_for(layout_, chunk_slots);
  // Every chunk still in the last image read first: one read from the chip may take a file
  // number, and the numbers are counted below.
  for (std::uint32_t c = 0; c < chunk_count; ++c) at(c * chunk_slots);
  std::vector<ImageChunks::Chunk> chunks;
  // Holders counted afresh from the entries: a restart that read a damaged chunk from the chip
  // may count more than there are (never fewer), and the count goes no further than here.
  std::vector<std::uint32_t> holders(file_refs_.number_limit(), 0);
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t c = 0; c < chunk_count; ++c) {
    const SlotIndex first = c * chunk_slots;
    const std::uint32_t count = std::min(chunk_slots, layout_.slot_count - first);
    bytes.assign(std::size_t{count} * kEntryImageBytes, 0);
    LittleEndianWriter out(bytes);
    ImageChunks::Chunk chunk;
    for (SlotIndex slot = first; slot < first + count; ++slot) {
      const Entry& e = at(slot);
      out.u32(e.file_ref);
      out.u32(e.page_low);
      out.u16(e.page_high);
      out.u8(e.flags);
      out.u8(e.chip_flags);
      if (e.file_ref != 0) {
        ++holders[e.file_ref];
        ++chunk.valid;
      }
    }
    auto part = parts.append(bytes);
    if (!part.is_ok()) return part.status();
    chunk.part = *part;
    chunks.push_back(chunk);
  }
  const std::uint32_t numbers = file_refs_.number_limit();
  std::vector<std::uint8_t> index(8 + 4 + std::size_t{numbers} * 12 + 8 +
                                  chunks.size() * (ImagePart::kEncodedBytes + 4));
  LittleEndianWriter out(index);
  out.u64(sequence_);
  out.u32(numbers);
  for (std::uint32_t n = 0; n < numbers; ++n) {
    out.u64(holders[n] > 0 ? file_refs_.file_id(n) : 0);
    out.u32(holders[n]);
  }
  out.u32(chunk_slots);
  out.u32(chunk_count);
  for (const ImageChunks::Chunk& chunk : chunks) {
    chunk.part.save(out);
    out.u32(chunk.valid);
  }
  return index;
}

Result<std::unique_ptr<MetadataStore>> MetadataStore::restore_image(Ftl& ftl, const SlotLayout& layout,
                                                                    MetadataScheme scheme,
                                                                    std::shared_ptr<const RestartImage> image,
                                                                    LittleEndianReader& in) {
  if (!layout.fits(ftl.logical_pages())) {
    return Status::invalid_argument("slot layout does not fit the FTL");
  }
  std::unique_ptr<MetadataStore> store(new MetadataStore(ftl, layout, scheme));
  if (in.remaining() < 12) return Status::corruption("the metadata store's part is cut short");
  store->sequence_ = in.u64();
  const std::uint32_t numbers = in.u32();
  if (numbers == 0 || numbers > in.remaining() / 12) return Status::corruption("impossible count of file numbers");
  std::vector<std::uint64_t> ids(numbers);
  std::vector<std::uint32_t> holders(numbers);
  std::uint64_t held = 0;
  for (std::uint32_t n = 0; n < numbers; ++n) {
    ids[n] = in.u64();
    holders[n] = in.u32();
    held += holders[n];
  }
  if (!store->file_refs_.restore(ids, holders)) return Status::corruption("file numbers that do not add up");
  if (in.remaining() < 8) return Status::corruption("the metadata store's part is cut short");
  auto chunks = std::make_unique<ImageChunks>();
  chunks->image = std::move(image);
  chunks->chunk_slots = in.u32();
  const std::uint32_t chunk_count = in.u32();
  if (chunks->chunk_slots != chunk_slots_for(layout) ||
      chunk_count != chunk_count_for(layout, chunks->chunk_slots) ||
      chunk_count > in.remaining() / (ImagePart::kEncodedBytes + 4)) {
    return Status::corruption("chunks of entries that do not fit the slot layout");
  }
  std::uint64_t valid = 0;
  chunks->chunks.resize(chunk_count);
  for (std::uint32_t c = 0; c < chunk_count; ++c) {
    ImageChunks::Chunk& chunk = chunks->chunks[c];
    chunk.part = ImagePart::load(in);
    chunk.valid = in.u32();
    const std::uint32_t count = std::min(chunks->chunk_slots, layout.slot_count - c * chunks->chunk_slots);
    if (chunk.part.length != std::uint64_t{count} * kEntryImageBytes || chunk.valid > count) {
      return Status::corruption("a chunk of entries of another size");
    }
    valid += chunk.valid;
  }
  if (valid != held) return Status::corruption("its chunks hold another count of entries than its file numbers");
  chunks->loaded.assign(chunk_count, false);
  chunks->left = chunk_count;
  if (chunk_count > 0) store->image_chunks_ = std::move(chunks);
  store->clean_mark_on_chip_ = true;
  return store;
}

void MetadataStore::load_chunk_of(SlotIndex slot) const {
  const std::uint32_t chunk = slot / image_chunks_->chunk_slots;
  // The store was never made const: the entries it fills in are its own, only not read yet.
  if (!image_chunks_->loaded[chunk]) const_cast<MetadataStore*>(this)->load_chunk(chunk);
}

void MetadataStore::load_chunk(std::uint32_t chunk) {
  ImageChunks& chunks = *image_chunks_;
  chunks.loaded[chunk] = true;  // first: nothing below may come back for it
  const SlotIndex first = chunk * chunks.chunk_slots;
  const std::uint32_t count = std::min(chunks.chunk_slots, layout_.slot_count - first);
  auto bytes = chunks.image->read(chunks.chunks[chunk].part);
  if (!bytes.is_ok() || !decode_chunk(*bytes, first, count)) {
    ++image_chunks_damaged_;
    const std::string why = bytes.is_ok() ? "entries a clean close cannot leave" : bytes.status().to_string();
    if (chunks_from_chip_.empty()) {
      chunks_from_chip_.assign(chunks.chunks.size(), false);
      chunk_slots_from_chip_ = chunks.chunk_slots;
    }
    chunks_from_chip_[chunk] = true;
    const std::uint32_t recorded = chunks.chunks[chunk].valid;
    const std::uint32_t found = read_chunk_from_chip(first, count);
    const std::uint32_t lost = recorded - std::min(found, recorded);
    image_entries_lost_ += lost;
    image_entries_change_ += std::int64_t{found} - std::int64_t{recorded};
    spdlog::warn("the restart image's entries of slots {} to {} are not usable ({}): read from the metadata pages, "
                 "{} of {} entries lost",
                 first, first + count - 1, why, lost, recorded);
  }
  if (--chunks.left == 0) image_chunks_.reset();
}

bool MetadataStore::decode_chunk(ConstByteSpan bytes, SlotIndex first, std::uint32_t count) {
  LittleEndianReader in(bytes);
  for (SlotIndex slot = first; slot < first + count; ++slot) {
    Entry& e = entries_[slot];
    e.file_ref = in.u32();
    e.page_low = in.u32();
    e.page_high = in.u16();
    e.flags = in.u8();
    e.chip_flags = in.u8();
    const bool valid = (e.flags & flag::kValid) != 0;
    const bool numbered = e.file_ref != 0 && e.file_ref < file_refs_.number_limit() &&
                          file_refs_.holders(e.file_ref) > 0;
    const bool named_right = valid ? numbered : e.file_ref == 0;
    if (!named_right || (e.flags & (flag::kWriting | flag::kDirty)) != 0 || e.flags != e.chip_flags) {
      std::fill(entries_.begin() + first, entries_.begin() + first + count, Entry{});
      return false;
    }
  }
  return true;
}

std::uint32_t MetadataStore::read_chunk_from_chip(SlotIndex first, std::uint32_t count) {
  std::vector<std::uint8_t> buffer(layout_.page_size_bytes);
  std::uint32_t found = 0;
  for (std::uint32_t page = layout_.page_of(first); page <= layout_.page_of(first + count - 1); ++page) {
    // A page that cannot be read gives no entry: its slots are free, and it is written again
    // (with them empty) at its next write or the clean close, so that no later restart finds
    // entries the cache let go.
    if (Status s = ftl_.read(Lpn(page), 1, buffer); !s.is_ok()) {
      if (s.code() != StatusCode::corruption) (void)fail(s);  // every later call fails with it
      note_update(page);
      continue;
    }
    auto decoded = decode_page(layout_, page, buffer);
    if (!decoded.is_ok()) {
      if (decoded.status().code() != StatusCode::not_found) note_update(page);
      continue;
    }
    const SlotIndex page_first = page * layout_.entries_per_page;
    for (std::uint32_t i = 0; i < decoded->entries.size(); ++i) {
      const format::MetadataEntry& m = decoded->entries[i];
      // After a clean close an entry is valid and nothing else, or empty: any other is not
      // taken, and its page is written again without it.
      if (m.flags != flag::kValid) {
        if (m.flags != 0) note_update(page);
        continue;
      }
      Entry& e = entries_[page_first + i];
      // Every number taken once more: the image's count of holders may already count this
      // entry (a number held too long is harmless; one freed while held would name another file).
      e.file_ref = file_refs_.acquire(m.file_id);
      e.page_low = static_cast<std::uint32_t>(m.page_no);
      e.page_high = static_cast<std::uint16_t>(m.page_no >> 32);
      e.flags = e.chip_flags = flag::kValid;
      ++found;
    }
  }
  return found;
}

}  // namespace flashdir::cache
