// Internal to src/format: how the superblock and the image header open: magic (8), format
// version (4), encoded size (4), the checksum (8, written as zero and filled in last), then the
// uuid (16) and the geometry (24).
#pragma once

#include <cstddef>
#include <cstdint>

#include "byte_counter.h"
#include "flashdir/format.h"

namespace flashdir::format {

inline constexpr std::size_t kRecordChecksumOffset = 16;
inline constexpr std::size_t kRecordHeaderSize = kRecordChecksumOffset + 8;

template <typename Writer>
constexpr void write_record_header(Writer& w, std::uint64_t magic, std::size_t encoded_size) {
  w.u64(magic);
  w.u32(kFormatVersion);
  w.u32(static_cast<std::uint32_t>(encoded_size));
  w.u64(0);  // checksum
}

constexpr std::size_t record_header_bytes() {
  ByteCounter counter;
  write_record_header(counter, 0, 0);
  return counter.count;
}
static_assert(record_header_bytes() == kRecordHeaderSize);

// What follows the header in both: the cache's uuid and the chip geometry (40 bytes).
inline constexpr std::size_t kIdentitySize = 40;

template <typename Writer>
constexpr void write_identity(Writer& w, const Uuid& uuid, const Geometry& geometry) {
  w.bytes(uuid.bytes);
  w.u32(geometry.page_size_bytes);
  w.u32(geometry.oob_size_bytes);
  w.u32(geometry.pages_per_block);
  w.u32(0);
  w.u64(geometry.block_count);
}

constexpr std::size_t identity_bytes() {
  ByteCounter counter;
  write_identity(counter, Uuid{}, Geometry{});
  return counter.count;
}
static_assert(identity_bytes() == kIdentitySize);

template <typename Reader>
void read_identity(Reader& r, Uuid& uuid, Geometry& geometry) {
  r.bytes(uuid.bytes);
  geometry.page_size_bytes = r.u32();
  geometry.oob_size_bytes = r.u32();
  geometry.pages_per_block = r.u32();
  r.skip(4);
  geometry.block_count = r.u64();
}

}  // namespace flashdir::format
