#include <algorithm>
#include <fmt/format.h>

#include "checksum.h"
#include "flashdir/endian.h"
#include "flashdir/format.h"
#include "record_header.h"

namespace flashdir::format {
namespace {

constexpr std::size_t kChecksumOffset = kRecordChecksumOffset;

// Everything after the record header, in order.
template <typename Writer>
constexpr void write_superblock_fields(Writer& w, const Superblock& sb) {
  write_identity(w, sb.uuid, sb.geometry);
  w.u8(static_cast<std::uint8_t>(sb.latency.preset));
  w.zeros(3);
  w.u32(sb.latency.read_us);
  w.u32(sb.latency.program_us);
  w.u32(sb.latency.erase_us);
  w.u8(static_cast<std::uint8_t>(sb.mapping_scheme));
  w.u8(static_cast<std::uint8_t>(sb.gc_policy));
  w.u8(static_cast<std::uint8_t>(sb.ram_policy));
  w.u8(sb.static_mapping_percent);
  w.u16(sb.overprovision_permille);
  w.u8(sb.clean_shutdown ? 1 : 0);
  w.u8(static_cast<std::uint8_t>(sb.slot_alignment));
  w.u64(sb.ram_budget_bytes);
  w.u64(sb.sequence);
  w.u64(sb.created_unix_s);
  w.u64(sb.file_id_limit);
}

static_assert(kRecordHeaderSize + bytes_written(write_superblock_fields<ByteCounter>) == kSuperblockEncodedSize);

}  // namespace

void encode_superblock(const Superblock& sb, ByteSpan slot) {
  std::fill(slot.begin(), slot.end(), std::uint8_t{0});
  LittleEndianWriter w(slot);
  write_record_header(w, kSuperblockMagic, kSuperblockEncodedSize);
  write_superblock_fields(w, sb);
  const ConstByteSpan record(slot.data(), kSuperblockEncodedSize);
  LittleEndianWriter(slot.subspan(kChecksumOffset, 8)).u64(checksum_with_field_zeroed(record, kChecksumOffset));
}

Result<Superblock> decode_superblock(ConstByteSpan slot) {
  if (slot.size() < kSuperblockEncodedSize) {
    return Status::corruption(
        fmt::format("superblock is truncated ({} of {} bytes)", slot.size(), kSuperblockEncodedSize));
  }
  LittleEndianReader r(slot);
  if (r.u64() != kSuperblockMagic) {
    return Status::corruption("superblock has a bad magic number (not a flashdir cache)");
  }
  if (const auto version = r.u32(); version != kFormatVersion) {
    return Status::corruption(
        fmt::format("superblock has format version {}, this build reads version {}", version, kFormatVersion));
  }
  if (const auto size = r.u32(); size != kSuperblockEncodedSize) {
    return Status::corruption(fmt::format(
        "superblock records size {}, expected {}{}", size, kSuperblockEncodedSize,
        size == 112 ? " (a cache made by an older flashdir: format it again with mkfs.flashdir --force)" : ""));
  }
  const std::uint64_t stored_checksum = r.u64();
  const ConstByteSpan record(slot.data(), kSuperblockEncodedSize);
  if (stored_checksum != checksum_with_field_zeroed(record, kChecksumOffset)) {
    return Status::corruption("superblock checksum mismatch");
  }
  Superblock sb;
  read_identity(r, sb.uuid, sb.geometry);
  const auto preset = r.u8();
  r.skip(3);
  sb.latency.read_us = r.u32();
  sb.latency.program_us = r.u32();
  sb.latency.erase_us = r.u32();
  const auto mapping = r.u8();
  const auto gc = r.u8();
  const auto ram = r.u8();
  sb.static_mapping_percent = r.u8();
  sb.overprovision_permille = r.u16();
  const auto clean = r.u8();
  const auto alignment = r.u8();
  sb.ram_budget_bytes = r.u64();
  sb.sequence = r.u64();
  sb.created_unix_s = r.u64();
  sb.file_id_limit = r.u64();

  // The checksum matched, so anything odd below was written by a buggy or newer writer.
  if (Status s = sb.geometry.validate(); !s.is_ok()) {
    return Status::corruption(fmt::format("superblock geometry: {}", s.message()));
  }
  if (preset > static_cast<std::uint8_t>(LatencyPreset::custom)) {
    return Status::corruption(fmt::format("superblock has unknown latency preset {}", preset));
  }
  sb.latency.preset = static_cast<LatencyPreset>(preset);
  if (mapping < 1 || mapping > 3) {
    return Status::corruption(fmt::format("superblock has unknown mapping scheme {}", mapping));
  }
  sb.mapping_scheme = static_cast<MappingScheme>(mapping);
  if (gc < 1 || gc > 3) {
    return Status::corruption(fmt::format("superblock has unknown GC policy {}", gc));
  }
  sb.gc_policy = static_cast<GcPolicy>(gc);
  if (ram < 1 || ram > 4) {
    return Status::corruption(fmt::format("superblock has unknown RAM policy {}", ram));
  }
  sb.ram_policy = static_cast<RamPolicy>(ram);
  if (sb.static_mapping_percent > 100) {
    return Status::corruption(
        fmt::format("superblock static mapping share {}% exceeds 100%", sb.static_mapping_percent));
  }
  if (sb.overprovision_permille >= 1000) {
    return Status::corruption(
        fmt::format("superblock over-provisioning {} per mille is not below 1000", sb.overprovision_permille));
  }
  if (clean > 1) {
    return Status::corruption(fmt::format("superblock clean-shutdown flag is {}", clean));
  }
  sb.clean_shutdown = clean == 1;
  if (alignment > static_cast<std::uint8_t>(SlotAlignment::logical_block)) {
    return Status::corruption(fmt::format("superblock has unknown slot alignment {}", alignment));
  }
  sb.slot_alignment = static_cast<SlotAlignment>(alignment);
  return sb;
}

}  // namespace flashdir::format
