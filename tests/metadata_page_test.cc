// The cache metadata page codec (format.h, doc/format.md): round trips, the layout's fixed
// offsets, and a decoder that refuses every damaged page with a clear error and never reads
// outside it. The fuzz loop's length is FLASHDIR_FUZZ_ITERATIONS (default small for CI).
#include <catch2/catch.hpp>

#include "flashdir/endian.h"
#include "flashdir/format.h"
#include "flashdir/random.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::format;
using flashdir::testing::replay_command;
using flashdir::testing::test_knob;
using flashdir::testing::test_seed;

namespace {

MetadataPageHeader sample_header() {
  MetadataPageHeader h;
  h.page_number = 7;
  h.sequence = 123456789;
  h.scheme = MetadataSchemeCode::lufuw;
  h.window = {7, 3, 11};
  return h;
}

std::vector<MetadataEntry> sample_entries(std::size_t count) {
  std::vector<MetadataEntry> entries(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (i % 5 == 4) continue;  // an invalid (empty) slot
    entries[i].file_id = 1000 + i;
    entries[i].page_no = (std::uint64_t{i} << 33) | i;  // beyond 32 bits
    entries[i].flags = static_cast<std::uint8_t>(metadata_flag::kValid | (i % 2 ? metadata_flag::kDirty : 0) |
                                                 (i % 3 == 0 ? metadata_flag::kWriting : 0));
  }
  return entries;
}

// Re-seals a page edited by a test, so that the edit reaches the checks behind the checksum.
void reseal(ByteSpan page) {
  std::fill_n(page.begin() + 16, 8, 0);
  const std::uint64_t sum = xxh3(page);
  LittleEndianWriter(page.subspan(16, 8)).u64(sum);
}

}  // namespace

TEST_CASE("a metadata page holds 237 entries of a 4 KiB page and round-trips", "[format][metadata]") {
  CHECK(metadata_entries_per_page(4096) == 237);
  CHECK(metadata_entries_per_page(512) == 13);
  CHECK(metadata_entries_per_page(304) == 0);
  const std::uint32_t page_size = GENERATE(512u, 4096u);
  std::vector<std::uint8_t> page(page_size, 0xAA);
  const auto entries = sample_entries(metadata_entries_per_page(page_size));
  MetadataPageHeader header = sample_header();
  header.clean_shutdown = page_size == 512;
  encode_metadata_page(header, entries, page);
  CHECK(LittleEndianReader(page).u64() == kMetadataPageMagic);
  auto decoded = decode_metadata_page(page);
  REQUIRE(decoded.is_ok());
  CHECK(decoded->header == header);
  CHECK(decoded->entries == entries);

  SECTION("fewer entries than the page holds; the rest of the page is zero") {
    encode_metadata_page(header, std::span(entries).first(2), page);
    auto partial = decode_metadata_page(page);
    REQUIRE(partial.is_ok());
    CHECK(partial->entries.size() == 2);
    CHECK(page.back() == 0);
  }
  SECTION("a full window of 63") {
    header.window.clear();
    for (std::uint32_t i = 0; i < kMetadataWindowCapacity; ++i) header.window.push_back(i * 1000);
    encode_metadata_page(header, entries, page);
    auto full = decode_metadata_page(page);
    REQUIRE(full.is_ok());
    CHECK(full->header.window == header.window);
  }
}

TEST_CASE("the metadata page decoder refuses damaged pages by name", "[format][metadata]") {
  std::vector<std::uint8_t> page(512);
  encode_metadata_page(sample_header(), sample_entries(13), page);
  auto expect = [&](StatusCode code, std::string_view words) {
    auto decoded = decode_metadata_page(page);
    REQUIRE(!decoded.is_ok());
    CHECK(decoded.status().code() == code);
    CHECK_THAT(decoded.status().message(), Catch::Contains(std::string(words)));
  };
  SECTION("never written") {
    std::fill(page.begin(), page.end(), 0);
    expect(StatusCode::not_found, "never written");
  }
  SECTION("erased") {
    std::fill(page.begin(), page.end(), 0xFF);
    expect(StatusCode::corruption, "magic");
  }
  SECTION("one flipped bit") {
    page[400] ^= 0x10;
    expect(StatusCode::corruption, "checksum");
  }
  SECTION("a torn tail") {
    std::fill(page.begin() + 300, page.end(), 0xFF);
    expect(StatusCode::corruption, "checksum");
  }
  SECTION("too small for a header") {
    page.resize(100);
    expect(StatusCode::corruption, "smaller than its header");
  }
  SECTION("fields that pass the checksum but not the layout") {
    SECTION("unknown scheme") {
      page[44] = 9;
      reseal(page);
      expect(StatusCode::corruption, "scheme");
    }
    SECTION("window too long") {
      page[46] = 64;
      reseal(page);
      expect(StatusCode::corruption, "window");
    }
    SECTION("more entries than the page holds") {
      LittleEndianWriter(ByteSpan(page).subspan(40, 4)).u32(14);
      LittleEndianWriter(ByteSpan(page).subspan(12, 4)).u32(304 + 14 * 16);
      reseal(page);
      expect(StatusCode::corruption, "holds 13");
    }
    SECTION("an unknown entry flag") {
      page[304 + 14] |= 0x80;
      reseal(page);
      expect(StatusCode::corruption, "entry 0");
    }
    SECTION("an invalid entry with a file id") {
      page[304 + 4 * 16] = 1;  // entry 4 is empty in the sample
      reseal(page);
      expect(StatusCode::corruption, "entry 4");
    }
    SECTION("bytes after the entries") {
      encode_metadata_page(sample_header(), sample_entries(12), page);
      page.back() = 1;
      reseal(page);
      expect(StatusCode::corruption, "after its entries");
    }
  }
}

TEST_CASE("the metadata page decoder survives random garbage and mutations", "[format][metadata][fuzz]") {
  const std::uint64_t seed = test_seed(0x5EED'0009);
  const std::uint64_t iterations = test_knob("FLASHDIR_FUZZ_ITERATIONS", 3000);
  INFO("seed " << seed << ", " << iterations << " iterations; replay: " << replay_command(seed));
  SeededRandom random(seed);
  std::vector<std::uint8_t> valid(512);
  encode_metadata_page(sample_header(), sample_entries(13), valid);
  std::uint64_t accepted = 0;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    std::vector<std::uint8_t> page = valid;
    switch (random.uniform(3)) {
      case 0:  // pure garbage of a random size, sometimes resealed to reach the field checks
        page.resize(random.uniform(700));
        for (auto& b : page) b = static_cast<std::uint8_t>(random.next_u64());
        if (page.size() >= 24 && random.one_in(2)) {
          LittleEndianWriter(page).u64(kMetadataPageMagic);
          LittleEndianWriter(ByteSpan(page).subspan(8, 4)).u32(kFormatVersion);
          reseal(page);
        }
        break;
      case 1:  // a few random bytes changed, resealed
        for (std::uint64_t k = random.between(1, 4); k > 0; --k) {
          page[random.uniform(page.size())] = static_cast<std::uint8_t>(random.next_u64());
        }
        reseal(page);
        break;
      default:  // a torn write: a prefix of the page, garbage after it
        for (std::size_t at = random.uniform(page.size()); at < page.size(); ++at) page[at] = static_cast<std::uint8_t>(random.next_u64());
        break;
    }
    auto decoded = decode_metadata_page(page);
    if (!decoded.is_ok()) {
      CHECK((decoded.status().code() == StatusCode::corruption || decoded.status().code() == StatusCode::not_found));
      continue;
    }
    ++accepted;
    // Whatever is accepted re-encodes to the same bytes: the decoder let nothing through that
    // the encoder would not write.
    std::vector<std::uint8_t> again(page.size());
    encode_metadata_page(decoded->header, decoded->entries, again);
    REQUIRE(again == page);
  }
  INFO("accepted " << accepted);
  SUCCEED();
}
