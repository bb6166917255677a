#include <algorithm>
#include <cstring>
#include <fmt/format.h>

#include "byte_counter.h"
#include "checksum.h"
#include "flashdir/endian.h"
#include "flashdir/format.h"

namespace flashdir::format {
namespace {

constexpr std::size_t kChecksumOffset = 40;

// Every field before the checksum, in order.
template <typename Writer>
constexpr void write_oob_fields(Writer& w, const OobRecord& record) {
  w.u8(static_cast<std::uint8_t>(record.kind));
  w.u8(kOobRecordVersion);
  w.u16(0);
  w.u32(record.aux);
  w.u64(record.logical_number);
  w.u64(record.sequence);
  w.u64(record.version);
  w.u64(record.data_hash);
}

static_assert(bytes_written(write_oob_fields<ByteCounter>) == kChecksumOffset);
static_assert(kChecksumOffset + 8 == kOobRecordSize);

bool known_kind(std::uint8_t kind) {
  return kind >= static_cast<std::uint8_t>(PageKind::data) && kind <= static_cast<std::uint8_t>(PageKind::checkpoint);
}

}  // namespace

void encode_oob(const OobRecord& record, ByteSpan out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  LittleEndianWriter w(out);
  write_oob_fields(w, record);
  w.u64(checksum_with_field_zeroed(ConstByteSpan(out.data(), kOobRecordSize), kChecksumOffset));
}

Result<OobRecord> decode_oob(ConstByteSpan in) {
  if (in.size() < kOobRecordSize) {
    return Status::corruption(fmt::format("OOB record is truncated ({} of {} bytes)", in.size(), kOobRecordSize));
  }
  const ConstByteSpan bytes = in.first(kOobRecordSize);
  if (is_erased(bytes)) return Status::corruption("OOB record is erased (page never programmed)");
  LittleEndianReader r(bytes);
  const std::uint8_t kind = r.u8();
  const std::uint8_t version = r.u8();
  r.skip(2);
  OobRecord record;
  record.aux = r.u32();
  record.logical_number = r.u64();
  record.sequence = r.u64();
  record.version = r.u64();
  record.data_hash = r.u64();
  if (r.u64() != checksum_with_field_zeroed(bytes, kChecksumOffset)) {
    return Status::corruption("OOB record checksum mismatch");
  }
  if (version != kOobRecordVersion) {
    return Status::corruption(fmt::format("OOB record has unknown version {}", version));
  }
  if (!known_kind(kind)) return Status::corruption(fmt::format("OOB record has unknown kind {}", kind));
  record.kind = static_cast<PageKind>(kind);
  return record;
}

bool is_erased(ConstByteSpan bytes) {
  // A word at a time: every OOB record read goes through here.
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    if (word != ~std::uint64_t{0}) return false;
  }
  return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(i), bytes.end(), [](std::uint8_t b) { return b == 0xFF; });
}

}  // namespace flashdir::format
