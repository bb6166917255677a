// fsck's copy-on-write overlay (src/check/overlay_store.h): whatever a chip over it programs or
// erases reads back through it, and the store beneath is never changed.
#include <catch2/catch.hpp>

#include "check/overlay_store.h"
#include "flashdir/clock.h"
#include "flashdir/format.h"
#include "flashdir/nand/simulated_chip.h"

using namespace flashdir;

namespace {

Geometry small_geometry() {
  Geometry g;
  g.page_size_bytes = 512;
  g.oob_size_bytes = 64;
  g.pages_per_block = 4;
  g.block_count = 4;
  return g;
}

std::vector<std::uint8_t> page_of(std::uint8_t value, std::size_t bytes) { return std::vector<std::uint8_t>(bytes, value); }

}  // namespace

TEST_CASE("the overlay reads the base where it wrote nothing and its own pages where it did", "[tools][overlay]") {
  const Geometry g = small_geometry();
  auto base = make_memory_store(g);
  SimClock clock;
  const auto oob = page_of(0x11, g.oob_size_bytes);
  {
    SimulatedChip chip(base, LatencyProfile::of(LatencyPreset::zero), clock);
    REQUIRE(chip.program(Ppn(0), 1, page_of(0xA0, g.page_size_bytes), oob).is_ok());
    REQUIRE(chip.program(Ppn(1), 1, page_of(0xA1, g.page_size_bytes), oob).is_ok());
    REQUIRE(chip.program(Ppn(4), 1, page_of(0xB0, g.page_size_bytes), oob).is_ok());
  }
  auto overlay = std::make_shared<OverlayStore>(base);
  SimulatedChip chip(overlay, LatencyProfile::of(LatencyPreset::zero), clock);
  // Block 0: a page programmed on top; block 1: erased, then programmed again.
  REQUIRE(chip.program(Ppn(2), 1, page_of(0xC2, g.page_size_bytes), oob).is_ok());
  REQUIRE(chip.erase(BlockNumber(1)).is_ok());
  REQUIRE(chip.program(Ppn(4), 1, page_of(0xD0, g.page_size_bytes), oob).is_ok());

  std::vector<std::uint8_t> run(3 * g.page_size_bytes);
  REQUIRE(chip.read(Ppn(0), 3, run, {}).is_ok());
  CHECK(run[0] == 0xA0);
  CHECK(run[g.page_size_bytes] == 0xA1);
  CHECK(run[2 * g.page_size_bytes] == 0xC2);
  std::vector<std::uint8_t> one(g.page_size_bytes);
  REQUIRE(chip.read(Ppn(4), 1, one, {}).is_ok());
  CHECK(one[0] == 0xD0);
  CHECK(chip.next_page(BlockNumber(1)) == 1);
  CHECK(overlay->block_state(BlockNumber(1)).erase_count == 1);

  // The base holds what it held before the overlay.
  CHECK(base->block_state(BlockNumber(0)).next_page == 2);
  CHECK(base->block_state(BlockNumber(1)).erase_count == 0);
  REQUIRE(base->read_pages(Ppn(4), 1, one, {}).is_ok());
  CHECK(one[0] == 0xB0);
  REQUIRE(base->read_pages(Ppn(2), 1, one, {}).is_ok());
  CHECK(one[0] == 0);
}

TEST_CASE("an erased block's old pages do not show through the overlay", "[tools][overlay]") {
  const Geometry g = small_geometry();
  auto base = make_memory_store(g);
  SimClock clock;
  const auto oob = page_of(0x11, g.oob_size_bytes);
  {
    SimulatedChip chip(base, LatencyProfile::of(LatencyPreset::zero), clock);
    REQUIRE(chip.program(Ppn(8), 2, page_of(0xE0, 2 * g.page_size_bytes), page_of(0x11, 2 * g.oob_size_bytes)).is_ok());
  }
  auto overlay = std::make_shared<OverlayStore>(base);
  REQUIRE(overlay->discard_block(BlockNumber(2)).is_ok());
  std::vector<std::uint8_t> data(g.page_size_bytes), record(g.oob_size_bytes);
  // The block table still claims the pages (the erase resets it afterwards): they read as a
  // discarded block of any store does, with no record.
  REQUIRE(overlay->read_pages(Ppn(9), 1, data, record).is_ok());
  CHECK(data == std::vector<std::uint8_t>(g.page_size_bytes, 0));
  CHECK(record == std::vector<std::uint8_t>(g.oob_size_bytes, 0));
  CHECK_FALSE(format::decode_oob(record).is_ok());
  REQUIRE(base->read_pages(Ppn(9), 1, data, record).is_ok());
  CHECK(data[0] == 0xE0);
}
