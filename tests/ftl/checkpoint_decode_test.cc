// The checkpoint decoder takes bytes from the medium: every count in them is checked against
// the layout before it sizes anything, whatever the value (issue 8, item 5). A count with
// valid checksums around it is what a bug or a deliberate edit leaves, so the tests recompute
// the checksums after changing a field.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "flashdir/format.h"
#include "flashdir/nand/simulated_chip.h"
#include "flashdir/random.h"
#include "ftl/checkpoint.h"
#include "ftl/mapcache/entry_cache.h"
#include "ftl_harness.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// Header offsets (doc/format.md, "Checkpoints").
constexpr std::size_t kLogicalPagesOffset = 48;
constexpr std::size_t kGtdEntriesOffset = 64;
constexpr std::size_t kSizeOffset = 72;
constexpr std::size_t kBodyChecksumOffset = 80;
constexpr std::size_t kHeaderChecksumOffset = 88;
constexpr std::size_t kHeaderSize = 96;

ftl::FtlLayout test_layout() {
  auto layout = ftl::FtlLayout::compute(small_ftl_geometry(), 70);
  REQUIRE_OK(layout);
  return layout.value();
}

ftl::CheckpointState sample_state(const ftl::FtlLayout& layout) {
  ftl::CheckpointState state;
  state.generation = 7;
  state.next_sequence = 1000;
  state.write_sequence = 400;
  state.host_time = 300;
  state.overprovision_permille = layout.overprovision_permille;
  state.logical_pages = layout.logical_pages;
  state.gtd.assign(layout.translation_pages, ftl::kUnmappedPpn);
  state.gtd[0] = 200;
  state.blocks.resize(layout.geometry.block_count);
  state.validity.assign((layout.geometry.page_count() + 63) / 64, 0);
  state.validity[5] = 0xF0F0;
  state.lost.assign((state.logical_pages + 63) / 64, 0);
  state.lost[0] = 0x22;
  return state;
}

void put_u64(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint64_t value) {
  for (std::size_t i = 0; i < 8; ++i) bytes[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// Recomputes the body checksum (if the body is whole) and then the header checksum.
void reseal(std::vector<std::uint8_t>& bytes) {
  if (bytes.size() < kHeaderSize) return;
  put_u64(bytes, kBodyChecksumOffset, format::xxh3(ConstByteSpan(bytes).subspan(kHeaderSize)));
  put_u64(bytes, kHeaderChecksumOffset, format::xxh3(ConstByteSpan(bytes).first(kHeaderChecksumOffset)));
}

// Decoding may fail, as corruption, or succeed with tables of the layout's sizes: nothing else.
void require_sane(const Result<ftl::CheckpointState>& decoded, const ftl::FtlLayout& layout) {
  if (!decoded.is_ok()) {
    REQUIRE(decoded.status().code() == StatusCode::corruption);
    return;
  }
  REQUIRE(decoded->logical_pages <= layout.geometry.page_count());
  REQUIRE(decoded->gtd.size() * layout.entries_per_translation_page >= decoded->logical_pages);
  REQUIRE(decoded->blocks.size() == layout.geometry.block_count);
  REQUIRE(decoded->validity.size() == (layout.geometry.page_count() + 63) / 64);
  REQUIRE(decoded->lost.size() == (decoded->logical_pages + 63) / 64);
}

}  // namespace

TEST_CASE("a checkpoint round-trips through its codec", "[ftl][checkpoint]") {
  const ftl::FtlLayout layout = test_layout();
  const ftl::CheckpointState state = sample_state(layout);
  auto decoded = ftl::decode_checkpoint(ftl::encode_checkpoint(state, layout), layout);
  REQUIRE_OK(decoded);
  CHECK(decoded->gtd == state.gtd);
  CHECK(decoded->validity == state.validity);
  CHECK(decoded->lost == state.lost);
  CHECK(decoded->logical_pages == state.logical_pages);
  CHECK(ftl::check_checkpoint_layout(*decoded, layout, "the options ask for").is_ok());
}

TEST_CASE("checkpoint counts near 2^64 are corruption, never an allocation", "[ftl][checkpoint]") {
  const ftl::FtlLayout layout = test_layout();
  const std::vector<std::uint8_t> good = ftl::encode_checkpoint(sample_state(layout), layout);
  const std::size_t offset = GENERATE(kGtdEntriesOffset, kLogicalPagesOffset, kSizeOffset);
  // 2^62 + 1 made `4 * gtd_entries` wrap to the real table size (the report).
  const std::uint64_t value = GENERATE(std::uint64_t{1} << 62, (std::uint64_t{1} << 62) + 1, ~std::uint64_t{0},
                                       std::uint64_t{1} << 32, std::uint64_t{0});
  INFO(fmt::format("header offset {} set to {}", offset, value));
  std::vector<std::uint8_t> bytes = good;
  put_u64(bytes, offset, value);
  reseal(bytes);
  const auto decoded = ftl::decode_checkpoint(bytes, layout);
  REQUIRE(!decoded.is_ok());
  CHECK(decoded.status().code() == StatusCode::corruption);
}

TEST_CASE("a checkpoint of another over-provisioning fails the layout check, naming the field", "[ftl][checkpoint]") {
  const ftl::FtlLayout layout = test_layout();
  auto other = ftl::FtlLayout::compute(layout.geometry, 200);
  REQUIRE_OK(other);
  ftl::CheckpointState state = sample_state(*other);
  auto decoded = ftl::decode_checkpoint(ftl::encode_checkpoint(state, *other), layout);
  REQUIRE_OK(decoded);  // a well-formed checkpoint; only its layout differs
  const Status s = ftl::check_checkpoint_layout(*decoded, layout, "the superblock records");
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK_THAT(s.message(), Catch::Contains("over-provisioning differs") && Catch::Contains("200 per mille") &&
                              Catch::Contains("70 per mille"));
}

TEST_CASE("fuzz: damaged checkpoints decode as corruption or as tables of the layout's size", "[ftl][checkpoint][fuzz]") {
  const std::uint64_t seed = test_seed(20261124);
  const std::uint64_t iterations = test_knob("FLASHDIR_FUZZ_ITERATIONS", 3000);
  INFO("seed " << seed << ", " << iterations << " iterations; replay: FLASHDIR_FUZZ_ITERATIONS=" << iterations
               << " " << replay_command(seed));
  const ftl::FtlLayout layout = test_layout();
  const std::vector<std::uint8_t> good = ftl::encode_checkpoint(sample_state(layout), layout);
  SeededRandom random(seed);
  const std::uint64_t extremes[] = {0, 1, 2, 0xFFFFFFFFull, 0x100000000ull, std::uint64_t{1} << 62,
                                    (std::uint64_t{1} << 62) + 1, ~std::uint64_t{0}, ~std::uint64_t{0} / 4 + 1};
  for (std::uint64_t i = 0; i < iterations; ++i) {
    std::vector<std::uint8_t> bytes = good;
    switch (random.uniform(4)) {
      case 0: {  // one header field, checksums recomputed
        const std::size_t offset = 16 + 8 * random.uniform((kBodyChecksumOffset - 16) / 8);
        const std::uint64_t value = random.one_in(2) ? extremes[random.uniform(std::size(extremes))]
                                                     : random.next_u64() >> random.uniform(64);
        put_u64(bytes, offset, value);
        reseal(bytes);
        break;
      }
      case 1: {  // a few body bytes, checksums recomputed
        for (std::uint64_t n = random.between(1, 8); n > 0; --n) {
          bytes[kHeaderSize + random.uniform(bytes.size() - kHeaderSize)] = static_cast<std::uint8_t>(random.next_u64());
        }
        reseal(bytes);
        break;
      }
      case 2:  // cut short anywhere, checksums recomputed over what is left
        bytes.resize(random.uniform(bytes.size()));
        reseal(bytes);
        break;
      default:  // raw damage, checksums left as they are
        for (std::uint64_t n = random.between(1, 4); n > 0; --n) {
          bytes[random.uniform(bytes.size())] ^= static_cast<std::uint8_t>(1u << random.uniform(8));
        }
        break;
    }
    INFO("iteration " << i);
    require_sane(ftl::decode_checkpoint(bytes, layout), layout);
  }
}

TEST_CASE("fuzz: the slot loader over damaged slot pages finds a sane checkpoint or a clear error",
          "[ftl][checkpoint][fuzz]") {
  // The loader reads pages, verifies records and joins pages before it decodes: damage to any
  // byte of a slot, record or data, with or without a valid checksum around it, must end in
  // the other slot's checkpoint, a corruption error or not_found, never in a crash or a throw.
  const std::uint64_t seed = test_seed(20261125);
  const std::uint64_t iterations = test_knob("FLASHDIR_FUZZ_ITERATIONS", 3000) / 10;
  INFO("seed " << seed << ", " << iterations << " iterations; replay: FLASHDIR_FUZZ_ITERATIONS="
               << iterations * 10 << " " << replay_command(seed));
  const ftl::FtlLayout layout = test_layout();
  const Geometry& g = layout.geometry;
  SeededRandom random(seed);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    INFO("iteration " << i);
    auto store = make_memory_store(g);
    SimClock clock;
    SimulatedChip chip(store, LatencyProfile::of(LatencyPreset::zero), clock);
    ftl::CheckpointSlots slots(chip, layout);
    ftl::CheckpointState state = sample_state(layout);
    std::uint64_t next_sequence = 1;
    std::uint32_t pages[2] = {};
    for (int slot = 0; slot < 2; ++slot) {
      state.generation = 10 + static_cast<std::uint64_t>(slot);
      auto written = slots.write(slot, state, next_sequence);
      REQUIRE_OK(written);
      pages[slot] = *written;
    }
    if (random.one_in(2)) REQUIRE_OK(slots.write_marker(1, 11, pages[1], next_sequence));
    // Damage a few bytes of the newest slot's pages (and sometimes the other's).
    for (std::uint64_t n = random.between(1, 6); n > 0; --n) {
      const int slot = random.one_in(4) ? 0 : 1;
      const Ppn page = g.first_page(layout.slot_first_block(slot)) + random.uniform(pages[slot] + 1);
      std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
      REQUIRE_OK(store->read_pages(page, 1, data, oob));
      const bool in_oob = random.one_in(3);
      std::vector<std::uint8_t>& bytes = in_oob ? oob : data;
      const std::size_t at = random.uniform(bytes.size());
      bytes[at] = random.one_in(2) ? static_cast<std::uint8_t>(random.next_u64()) : bytes[at] ^ 0x01;
      if (!in_oob && random.one_in(2)) {
        // Keep the record valid over the damaged data: what a bug, not the medium, leaves.
        auto record = format::decode_oob(oob);
        if (record.is_ok()) {
          record->data_hash = format::xxh3(data);
          format::encode_oob(*record, oob);
        }
      }
      REQUIRE_OK(store->write_pages(page, 1, data, oob));
    }
    std::vector<std::string> problems;
    auto loaded = slots.load_newest(&problems);
    if (!loaded.is_ok()) {
      CHECK((loaded.status().code() == StatusCode::corruption || loaded.status().code() == StatusCode::not_found));
      continue;
    }
    CHECK((loaded->state.generation == 10 || loaded->state.generation == 11));
    require_sane(loaded.value().state, layout);
  }
}
