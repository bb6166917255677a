#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <vector>

#include "flashdir/format.h"
#include "flashdir/size.h"

using namespace flashdir;
using namespace flashdir::format;

namespace {

Superblock sample_superblock() {
  Superblock sb;
  sb.uuid = Uuid::random();
  sb.geometry = {4096, 64, 128, 512};
  sb.latency = LatencyProfile::of(LatencyPreset::mlc);
  sb.mapping_scheme = MappingScheme::dftl;
  sb.gc_policy = GcPolicy::cost_benefit;
  sb.ram_policy = RamPolicy::static_split;
  sb.static_mapping_percent = 30;
  sb.overprovision_permille = 120;
  sb.clean_shutdown = false;
  sb.ram_budget_bytes = 16 << 20;
  sb.sequence = 42;
  sb.created_unix_s = 1'700'000'000;
  return sb;
}

// Recomputes the checksum of an edited record, so that the edit reaches the checks behind it.
void reseal(std::vector<std::uint8_t>& bytes, std::size_t record_size, std::size_t checksum_offset) {
  std::vector<std::uint8_t> copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(record_size));
  std::fill_n(copy.begin() + static_cast<std::ptrdiff_t>(checksum_offset), 8, 0);
  const std::uint64_t checksum = xxh3(copy);
  for (std::size_t i = 0; i < 8; ++i) bytes[checksum_offset + i] = static_cast<std::uint8_t>(checksum >> (8 * i));
}

constexpr std::size_t kSuperblockChecksumOffset = 16;
constexpr std::size_t kOobChecksumOffset = 40;

}  // namespace

TEST_CASE("superblock round-trips through its encoding", "[format]") {
  const Superblock sb = sample_superblock();
  std::vector<std::uint8_t> slot(kSuperblockSlotSize);
  encode_superblock(sb, slot);
  auto decoded = decode_superblock(slot);
  REQUIRE(decoded.is_ok());
  CHECK(decoded.value() == sb);
}

TEST_CASE("superblock magic is the bytes FLASHDIR", "[format]") {
  std::vector<std::uint8_t> slot(kSuperblockSlotSize);
  encode_superblock(sample_superblock(), slot);
  CHECK(std::string(slot.begin(), slot.begin() + 8) == "FLASHDIR");
}

TEST_CASE("every flipped byte of the encoded superblock is refused", "[format]") {
  std::vector<std::uint8_t> slot(kSuperblockSlotSize);
  encode_superblock(sample_superblock(), slot);
  for (std::size_t i = 0; i < kSuperblockEncodedSize; ++i) {
    auto damaged = slot;
    damaged[i] ^= 0x10;
    auto decoded = decode_superblock(damaged);
    INFO("byte " << i);
    REQUIRE_FALSE(decoded.is_ok());
    CHECK(decoded.status().code() == StatusCode::corruption);
    CHECK_THAT(decoded.status().message(), Catch::Contains("superblock"));
  }
}

TEST_CASE("superblock checks are named in their messages", "[format]") {
  std::vector<std::uint8_t> slot(kSuperblockSlotSize);
  encode_superblock(sample_superblock(), slot);
  auto with_byte = [&](std::size_t offset, std::uint8_t value) {
    auto copy = slot;
    copy[offset] = value;
    return decode_superblock(copy).status().message();
  };
  CHECK_THAT(with_byte(0, 'X'), Catch::Contains("bad magic"));
  CHECK_THAT(with_byte(8, 9), Catch::Contains("format version 9"));
  CHECK_THAT(with_byte(40, 0x11), Catch::Contains("checksum mismatch"));
  CHECK_THAT(decode_superblock(std::vector<std::uint8_t>(10)).status().message(), Catch::Contains("truncated"));
}

TEST_CASE("a superblock with a valid checksum but impossible fields is refused", "[format]") {
  Superblock sb = sample_superblock();
  sb.geometry.page_size_bytes = 3000;
  std::vector<std::uint8_t> slot(kSuperblockSlotSize);
  encode_superblock(sb, slot);
  auto decoded = decode_superblock(slot);
  REQUIRE_FALSE(decoded.is_ok());
  CHECK_THAT(decoded.status().message(), Catch::Contains("page size 3000"));

  sb = sample_superblock();
  sb.static_mapping_percent = 101;
  encode_superblock(sb, slot);
  CHECK_THAT(decode_superblock(slot).status().message(), Catch::Contains("101%"));
}

TEST_CASE("a superblock field out of its range is refused by name", "[format]") {
  auto refusal = [](auto change) {
    Superblock sb = sample_superblock();
    change(sb);
    std::vector<std::uint8_t> slot(kSuperblockSlotSize);
    encode_superblock(sb, slot);
    auto decoded = decode_superblock(slot);
    REQUIRE_FALSE(decoded.is_ok());
    CHECK(decoded.status().code() == StatusCode::corruption);
    return decoded.status().message();
  };
  CHECK_THAT(refusal([](Superblock& sb) { sb.latency.preset = static_cast<LatencyPreset>(4); }),
             Catch::Contains("unknown latency preset 4"));
  for (const int value : {0, 4}) {
    INFO("value " << value);
    CHECK_THAT(refusal([&](Superblock& sb) { sb.mapping_scheme = static_cast<MappingScheme>(value); }),
               Catch::Contains(fmt::format("unknown mapping scheme {}", value)));
    CHECK_THAT(refusal([&](Superblock& sb) { sb.gc_policy = static_cast<GcPolicy>(value); }),
               Catch::Contains(fmt::format("unknown GC policy {}", value)));
  }
  for (const int value : {0, 5}) {  // stack is 4
    INFO("value " << value);
    CHECK_THAT(refusal([&](Superblock& sb) { sb.ram_policy = static_cast<RamPolicy>(value); }),
               Catch::Contains(fmt::format("unknown RAM policy {}", value)));
  }
  CHECK_THAT(refusal([](Superblock& sb) { sb.overprovision_permille = 1000; }),
             Catch::Contains("over-provisioning 1000 per mille"));
  CHECK_THAT(refusal([](Superblock& sb) { sb.geometry.block_count = 0; }),
             Catch::Contains("superblock geometry: block count is zero"));

  // A bool cannot hold 2, so edit the encoded flag and reseal the checksum.
  constexpr std::size_t kCleanFlagOffset = 86;
  std::vector<std::uint8_t> slot(kSuperblockSlotSize);
  encode_superblock(sample_superblock(), slot);
  slot[kCleanFlagOffset] = 2;
  reseal(slot, kSuperblockEncodedSize, kSuperblockChecksumOffset);
  CHECK_THAT(decode_superblock(slot).status().message(), Catch::Contains("clean-shutdown flag is 2"));
  slot[kCleanFlagOffset] = 1;
  reseal(slot, kSuperblockEncodedSize, kSuperblockChecksumOffset);
  REQUIRE(decode_superblock(slot).is_ok());
  CHECK(decode_superblock(slot)->clean_shutdown);
}

TEST_CASE("the superblock's slot alignment: 0 (a cache formatted before it) is the old layout, unknown ones are refused",
          "[format]") {
  constexpr std::size_t kSlotAlignmentOffset = 87;
  std::vector<std::uint8_t> slot(kSuperblockSlotSize);
  Superblock sb = sample_superblock();
  CHECK(sb.slot_alignment == SlotAlignment::logical_block);  // what a new cache gets
  encode_superblock(sb, slot);
  CHECK(slot[kSlotAlignmentOffset] == 1);
  REQUIRE(decode_superblock(slot).is_ok());
  CHECK(decode_superblock(slot)->slot_alignment == SlotAlignment::logical_block);

  slot[kSlotAlignmentOffset] = 0;  // the reserved byte every earlier flashdir wrote
  reseal(slot, kSuperblockEncodedSize, kSuperblockChecksumOffset);
  REQUIRE(decode_superblock(slot).is_ok());
  CHECK(decode_superblock(slot)->slot_alignment == SlotAlignment::after_metadata);

  slot[kSlotAlignmentOffset] = 2;
  reseal(slot, kSuperblockEncodedSize, kSuperblockChecksumOffset);
  CHECK_THAT(decode_superblock(slot).status().message(), Catch::Contains("unknown slot alignment 2"));
}

TEST_CASE("an image header with a valid checksum must agree with itself", "[format]") {
  ImageHeader header{Uuid::random(), {2048, 64, 64, 100}, {}};
  header.layout = image_layout(header.geometry);
  std::vector<std::uint8_t> bytes(kImageHeaderSize);

  SECTION("its geometry must be valid") {
    ImageHeader bad = header;
    bad.geometry.page_size_bytes = 3000;
    encode_image_header(bad, bytes);
    const Status refused = decode_image_header(bytes).status();
    CHECK(refused.code() == StatusCode::corruption);
    CHECK_THAT(refused.message(), Catch::Contains("image header geometry") && Catch::Contains("page size 3000"));
  }
  SECTION("its offsets must be the ones its geometry gives") {
    for (auto field : {&ImageLayout::block_table_offset, &ImageLayout::oob_offset, &ImageLayout::data_offset,
                       &ImageLayout::file_size}) {
      ImageHeader bad = header;
      bad.layout.*field += 4096;
      encode_image_header(bad, bytes);
      const Status refused = decode_image_header(bytes).status();
      CHECK(refused.code() == StatusCode::corruption);
      CHECK_THAT(refused.message(), Catch::Contains("offsets disagree with its geometry"));
    }
  }
}

TEST_CASE("image header round-trips and rejects damage", "[format]") {
  ImageHeader header{Uuid::random(), {2048, 64, 64, 100}, {}};
  header.layout = image_layout(header.geometry);
  std::vector<std::uint8_t> bytes(kImageHeaderSize);
  encode_image_header(header, bytes);
  auto decoded = decode_image_header(bytes);
  REQUIRE(decoded.is_ok());
  CHECK(decoded->uuid == header.uuid);
  CHECK(decoded->geometry == header.geometry);
  CHECK(decoded->layout == header.layout);
  for (std::size_t i = 0; i < kImageHeaderEncodedSize; ++i) {
    auto damaged = bytes;
    damaged[i] ^= 0x01;
    INFO("byte " << i);
    CHECK_THAT(decode_image_header(damaged).status().message(), Catch::Contains("image header"));
  }
}

TEST_CASE("image layout aligns the data area and sizes the file", "[format]") {
  const Geometry g{4096, 64, 128, 1000};
  const ImageLayout layout = image_layout(g);
  CHECK(layout.block_table_offset == kImageHeaderSize);
  CHECK(layout.oob_offset >= layout.block_table_offset + g.block_count * kBlockTableEntrySize);
  CHECK(layout.data_offset % 4096 == 0);
  CHECK(layout.data_offset >= layout.oob_offset + g.page_count() * g.oob_size_bytes);
  CHECK(layout.file_size == layout.data_offset + g.capacity_bytes());
}

TEST_CASE("OOB record round-trips and rejects every flipped byte", "[format]") {
  OobRecord record{PageKind::translation, 7, 123456789, 99, 98, 0xDEADBEEFCAFEF00DULL};
  std::vector<std::uint8_t> oob(64);
  encode_oob(record, oob);
  auto decoded = decode_oob(oob);
  REQUIRE(decoded.is_ok());
  CHECK(decoded.value() == record);
  for (std::size_t i = 0; i < kOobRecordSize; ++i) {
    auto damaged = oob;
    damaged[i] ^= 0x80;
    INFO("byte " << i);
    CHECK(decode_oob(damaged).status().code() == StatusCode::corruption);
  }
}

TEST_CASE("an OOB record of an unknown version or kind is refused", "[format]") {
  std::vector<std::uint8_t> oob(64);
  encode_oob(OobRecord{PageKind::data, 0, 5, 6, 7, 8}, oob);
  auto with_byte = [&](std::size_t offset, std::uint8_t value) {
    auto copy = oob;
    copy[offset] = value;
    reseal(copy, kOobRecordSize, kOobChecksumOffset);
    return decode_oob(copy).status();
  };
  constexpr std::size_t kKindOffset = 0;
  constexpr std::size_t kVersionOffset = 1;
  CHECK_THAT(with_byte(kVersionOffset, 2).message(), Catch::Contains("unknown version 2"));
  CHECK_THAT(with_byte(kVersionOffset, 0).message(), Catch::Contains("unknown version 0"));
  CHECK_THAT(with_byte(kKindOffset, 0).message(), Catch::Contains("unknown kind 0"));
  CHECK_THAT(with_byte(kKindOffset, 4).message(), Catch::Contains("unknown kind 4"));
  CHECK(with_byte(kKindOffset, 3).is_ok());  // the reseal itself is sound
}

TEST_CASE("an erased OOB area is recognised and not decoded", "[format]") {
  std::vector<std::uint8_t> oob(64, 0xFF);
  CHECK(is_erased(oob));
  CHECK_THAT(decode_oob(oob).status().message(), Catch::Contains("erased"));
  oob[63] = 0xFE;
  CHECK_FALSE(is_erased(oob));
}

TEST_CASE("sizes parse with binary suffixes and refuse garbage", "[format][size]") {
  CHECK(parse_size("4096").value() == 4096);
  CHECK(parse_size("4K").value() == 4096);
  CHECK(parse_size("4k").value() == 4096);
  CHECK(parse_size("64M").value() == 64ULL << 20);
  CHECK(parse_size("2G").value() == 2ULL << 30);
  CHECK(parse_size("1T").value() == 1ULL << 40);
  CHECK(parse_size("16KiB").value() == 16ULL << 10);
  CHECK(parse_size("0").value() == 0);
  for (const char* bad : {"", "M", "12Q", "1.5G", "-1", "99999999999999999999", "20000000T", "4 K"}) {
    INFO(bad);
    CHECK_FALSE(parse_size(bad).is_ok());
  }
  CHECK(format_size(64ULL << 20) == "64 MiB");
  CHECK(format_size(1536) == "1.5 KiB");
  CHECK(format_size(100) == "100 B");
}
