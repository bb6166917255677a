// The cache metadata page codec (include/flashdir/format.h, doc/format.md).
#include <algorithm>
#include <cassert>
#include <fmt/format.h>

#include "byte_counter.h"
#include "checksum.h"
#include "flashdir/endian.h"
#include "flashdir/format.h"
#include "record_header.h"

namespace flashdir::format {
namespace {

template <typename Writer>
constexpr void write_metadata_header_fields(Writer& w, const MetadataPageHeader& header) {
  w.u64(header.page_number);
  w.u64(header.sequence);
  w.u32(0);  // entry count, patched by the encoder (the header alone does not know it)
  w.u8(static_cast<std::uint8_t>(header.scheme));
  w.u8(header.clean_shutdown ? 1 : 0);
  w.u8(static_cast<std::uint8_t>(header.window.size()));
  w.u8(0);
  for (std::uint32_t page : header.window) w.u32(page);
  w.zeros((kMetadataWindowCapacity - header.window.size()) * 4);
  w.u32(0);
}

template <typename Writer>
constexpr void write_metadata_entry(Writer& w, const MetadataEntry& entry) {
  w.u64(entry.file_id);
  w.u32(static_cast<std::uint32_t>(entry.page_no));
  w.u16(static_cast<std::uint16_t>(entry.page_no >> 32));
  w.u8(entry.flags);
  w.u8(0);
}

constexpr std::size_t kEntryCountOffset = 40;

static_assert(kRecordHeaderSize + bytes_written(write_metadata_header_fields<ByteCounter>) == kMetadataPageHeaderSize);
static_assert(bytes_written(write_metadata_entry<ByteCounter>) == kMetadataEntrySize);
static_assert(kMetadataWindowCapacity <= 255);  // the window length is one byte

bool all_zero(ConstByteSpan bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

}  // namespace

std::size_t metadata_entries_per_page(std::uint32_t page_size_bytes) {
  if (page_size_bytes <= kMetadataPageHeaderSize) return 0;
  return (page_size_bytes - kMetadataPageHeaderSize) / kMetadataEntrySize;
}

void encode_metadata_page(const MetadataPageHeader& header, std::span<const MetadataEntry> entries, ByteSpan page) {
  assert(entries.size() <= metadata_entries_per_page(static_cast<std::uint32_t>(page.size())));
  assert(header.window.size() <= kMetadataWindowCapacity);
  std::fill(page.begin(), page.end(), std::uint8_t{0});
  const std::size_t encoded = kMetadataPageHeaderSize + entries.size() * kMetadataEntrySize;
  LittleEndianWriter w(page);
  write_record_header(w, kMetadataPageMagic, encoded);
  write_metadata_header_fields(w, header);
  for (const MetadataEntry& entry : entries) {
    assert(entry.page_no <= kMetadataMaxPageNumber);
    assert(entry.valid() || entry == MetadataEntry{});
    write_metadata_entry(w, entry);
  }
  LittleEndianWriter count(page.subspan(kEntryCountOffset, 4));
  count.u32(static_cast<std::uint32_t>(entries.size()));
  LittleEndianWriter checksum(page.subspan(kRecordChecksumOffset, 8));
  checksum.u64(page_checksum_with_field_zeroed(page, kRecordChecksumOffset));
}

Result<MetadataPage> decode_metadata_page(ConstByteSpan page) {
  if (page.size() < kMetadataPageHeaderSize) {
    return Status::corruption(fmt::format("metadata page of {} bytes is smaller than its header", page.size()));
  }
  if (all_zero(page)) return Status::not_found("metadata page was never written");
  LittleEndianReader r(page);
  if (r.u64() != kMetadataPageMagic) return Status::corruption("metadata page has a bad magic");
  const std::uint32_t version = r.u32();
  const std::uint32_t encoded = r.u32();
  const std::uint64_t stored_checksum = r.u64();
  // The checksum first: it catches torn and garbage pages, whose other fields mean nothing.
  if (stored_checksum != page_checksum_with_field_zeroed(page, kRecordChecksumOffset)) {
    return Status::corruption("metadata page checksum mismatch");
  }
  if (version != kFormatVersion) return Status::corruption(fmt::format("metadata page has unknown version {}", version));
  MetadataPage result;
  MetadataPageHeader& h = result.header;
  h.page_number = r.u64();
  h.sequence = r.u64();
  const std::uint32_t count = r.u32();
  const std::uint8_t scheme = r.u8();
  const std::uint8_t flags = r.u8();
  const std::uint8_t window_length = r.u8();
  const std::uint8_t reserved = r.u8();
  const std::size_t capacity = metadata_entries_per_page(static_cast<std::uint32_t>(page.size()));
  if (count > capacity || encoded != kMetadataPageHeaderSize + std::size_t{count} * kMetadataEntrySize) {
    return Status::corruption(fmt::format("metadata page claims {} entries in {} bytes; a {}-byte page holds {}", count,
                                          encoded, page.size(), capacity));
  }
  if (scheme < static_cast<std::uint8_t>(MetadataSchemeCode::lufuw) ||
      scheme > static_cast<std::uint8_t>(MetadataSchemeCode::update_write_update)) {
    return Status::corruption(fmt::format("metadata page has unknown scheme {}", scheme));
  }
  if ((flags & ~1u) != 0 || reserved != 0) return Status::corruption("metadata page has unknown header flags");
  if (window_length > kMetadataWindowCapacity) {
    return Status::corruption(fmt::format("metadata page window of {} exceeds {}", window_length, kMetadataWindowCapacity));
  }
  h.scheme = static_cast<MetadataSchemeCode>(scheme);
  h.clean_shutdown = (flags & 1u) != 0;
  h.window.resize(window_length);
  for (std::uint32_t& number : h.window) number = r.u32();
  for (std::size_t i = window_length; i < kMetadataWindowCapacity; ++i) {
    if (r.u32() != 0) return Status::corruption("metadata page has a non-zero unused window slot");
  }
  if (r.u32() != 0) return Status::corruption("metadata page has non-zero reserved bytes");
  result.entries.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    MetadataEntry& entry = result.entries[i];
    entry.file_id = r.u64();
    entry.page_no = r.u32();
    entry.page_no |= std::uint64_t{r.u16()} << 32;
    entry.flags = r.u8();
    const std::uint8_t entry_reserved = r.u8();
    if ((entry.flags & ~metadata_flag::kKnown) != 0 || entry_reserved != 0 ||
        (!entry.valid() && !(entry == MetadataEntry{}))) {
      return Status::corruption(fmt::format("metadata page entry {} is malformed (flags {:#x})", i, entry.flags));
    }
  }
  if (!all_zero(page.subspan(encoded))) return Status::corruption("metadata page has bytes after its entries");
  return result;
}

}  // namespace flashdir::format
