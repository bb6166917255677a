#include <algorithm>
#include <fmt/format.h>

#include "checksum.h"
#include "flashdir/endian.h"
#include "flashdir/format.h"
#include "record_header.h"

namespace flashdir::format {
namespace {

constexpr std::size_t kChecksumOffset = kRecordChecksumOffset;
constexpr std::uint64_t kAlignment = 4096;

std::uint64_t align_up(std::uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

// Everything after the record header, in order.
template <typename Writer>
constexpr void write_image_header_fields(Writer& w, const ImageHeader& header) {
  write_identity(w, header.uuid, header.geometry);
  w.u64(header.layout.block_table_offset);
  w.u64(header.layout.oob_offset);
  w.u64(header.layout.data_offset);
  w.u64(header.layout.file_size);
}

static_assert(kRecordHeaderSize + bytes_written(write_image_header_fields<ByteCounter>) == kImageHeaderEncodedSize);

template <typename Writer>
constexpr void write_block_table_entry(Writer& w, const BlockTableEntry& entry) {
  w.u32(entry.erase_count);
  w.u32(entry.next_page);
}

static_assert(bytes_written(write_block_table_entry<ByteCounter>) == kBlockTableEntrySize);

}  // namespace

ImageLayout image_layout(const Geometry& geometry) {
  ImageLayout layout;
  layout.block_table_offset = kImageHeaderSize;
  layout.oob_offset = align_up(layout.block_table_offset + geometry.block_count * kBlockTableEntrySize);
  layout.data_offset = align_up(layout.oob_offset + geometry.page_count() * geometry.oob_size_bytes);
  layout.file_size = layout.data_offset + geometry.capacity_bytes();
  return layout;
}

void encode_image_header(const ImageHeader& header, ByteSpan out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  LittleEndianWriter w(out);
  write_record_header(w, kImageMagic, kImageHeaderEncodedSize);
  write_image_header_fields(w, header);
  const ConstByteSpan record(out.data(), kImageHeaderEncodedSize);
  LittleEndianWriter(out.subspan(kChecksumOffset, 8)).u64(checksum_with_field_zeroed(record, kChecksumOffset));
}

Result<ImageHeader> decode_image_header(ConstByteSpan in) {
  if (in.size() < kImageHeaderEncodedSize) {
    return Status::corruption(
        fmt::format("image header is truncated ({} of {} bytes)", in.size(), kImageHeaderEncodedSize));
  }
  LittleEndianReader r(in);
  if (r.u64() != kImageMagic) {
    return Status::corruption("image header has a bad magic number (not a flashdir NAND image)");
  }
  if (const auto version = r.u32(); version != kFormatVersion) {
    return Status::corruption(
        fmt::format("image header has format version {}, this build reads version {}", version, kFormatVersion));
  }
  if (const auto size = r.u32(); size != kImageHeaderEncodedSize) {
    return Status::corruption(fmt::format("image header records size {}, expected {}", size, kImageHeaderEncodedSize));
  }
  const std::uint64_t stored_checksum = r.u64();
  if (stored_checksum !=
      checksum_with_field_zeroed(ConstByteSpan(in.data(), kImageHeaderEncodedSize), kChecksumOffset)) {
    return Status::corruption("image header checksum mismatch");
  }
  ImageHeader header;
  read_identity(r, header.uuid, header.geometry);
  header.layout.block_table_offset = r.u64();
  header.layout.oob_offset = r.u64();
  header.layout.data_offset = r.u64();
  header.layout.file_size = r.u64();
  // Stored bytes that make no sense are corruption, whatever the validator calls them.
  if (Status s = header.geometry.validate(); !s.is_ok()) {
    return Status::corruption(fmt::format("image header geometry: {}", s.message()));
  }
  if (header.layout != image_layout(header.geometry)) {
    return Status::corruption("image header offsets disagree with its geometry");
  }
  return header;
}

void encode_block_table_entry(const BlockTableEntry& entry, ByteSpan out) {
  LittleEndianWriter w(out);
  write_block_table_entry(w, entry);
}

BlockTableEntry decode_block_table_entry(ConstByteSpan in) {
  LittleEndianReader r(in);
  BlockTableEntry entry;
  entry.erase_count = r.u32();
  entry.next_page = r.u32();
  return entry;
}

}  // namespace flashdir::format
