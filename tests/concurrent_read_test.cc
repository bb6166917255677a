// NandChip's concurrent reads: the same bytes as read(), nothing counted until charge_reads(),
// which counts as read() does; refused where the chip must see every operation or the store
// cannot serve them.
#include <catch2/catch.hpp>

#include "flashdir/nand/faulty_chip.h"
#include "flashdir/nand/real_time_chip.h"
#include "support/test_chip.h"

using namespace flashdir;
using namespace flashdir::testing;

TEST_CASE("a concurrent read returns what read() does and is charged as read() is", "[nand]") {
  const auto backend = GENERATE(Backend::memory, Backend::image);
  INFO(backend_label(backend));
  const Geometry g{512, 64, 8, 4};
  TestChip chip(backend, g, LatencyProfile::of(LatencyPreset::slc));
  REQUIRE(chip.chip().concurrent_reads());
  SeededRandom random(3);
  for (std::uint64_t p = 0; p < 12; ++p) {  // a block and a half: the run crosses a block
    const PageImage page = random_page(g, random, p + 1);
    REQUIRE(chip.chip().program(Ppn(p), 1, page.data, page.oob).is_ok());
  }
  std::vector<std::uint8_t> data(12 * g.page_size_bytes), oob(12 * g.oob_size_bytes);
  std::vector<std::uint8_t> data2(data.size()), oob2(oob.size());
  const ChipCounters before = chip.chip().counters();
  const std::uint64_t clock_before = chip.clock().now_ns();
  REQUIRE(chip.chip().read_concurrently(Ppn(0), 12, data2, oob2).is_ok());
  CHECK(chip.chip().counters().page_reads == before.page_reads);
  CHECK(chip.clock().now_ns() == clock_before);
  REQUIRE(chip.chip().charge_reads(12).is_ok());
  const ChipCounters charged = chip.chip().counters();
  const std::uint64_t clock_charged = chip.clock().now_ns();
  REQUIRE(chip.chip().read(Ppn(0), 12, data, oob).is_ok());
  CHECK(data == data2);
  CHECK(oob == oob2);
  CHECK(charged.page_reads - before.page_reads == 12);
  CHECK(chip.chip().counters().page_reads - charged.page_reads == 12);
  CHECK(clock_charged - clock_before == chip.clock().now_ns() - clock_charged);
  CHECK(clock_charged > clock_before);
  // The rules on addresses and buffers hold as for read().
  CHECK(chip.chip().read_concurrently(Ppn(g.page_count()), 1, ByteSpan(data).first(g.page_size_bytes), {}).code() ==
        StatusCode::invalid_argument);
  CHECK(chip.chip().read_concurrently(Ppn(0), 2, ByteSpan(data).first(g.page_size_bytes), {}).code() ==
        StatusCode::invalid_argument);
}

TEST_CASE("chips that must see every operation, and the metadata-only store, refuse concurrent reads", "[nand]") {
  const Geometry g{512, 64, 8, 4};
  std::vector<std::uint8_t> data(g.page_size_bytes);
  TestChip metadata(Backend::metadata, g);
  CHECK_FALSE(metadata.chip().concurrent_reads());
  CHECK(metadata.chip().read_concurrently(Ppn(0), 1, {}, ByteSpan(data).first(g.oob_size_bytes)).code() ==
        StatusCode::invalid_argument);
  CHECK(metadata.chip().charge_reads(1).code() == StatusCode::invalid_argument);

  TestChip memory(Backend::memory, g);
  FaultyChip faulty(memory.chip(), FaultPlan{});
  CHECK_FALSE(faulty.concurrent_reads());
  CHECK(faulty.read_concurrently(Ppn(0), 1, data, {}).code() == StatusCode::invalid_argument);
  CHECK(faulty.charge_reads(1).code() == StatusCode::invalid_argument);
  RealTimeChip paced(memory.chip(), memory.clock());
  CHECK_FALSE(paced.concurrent_reads());
  CHECK(paced.read_concurrently(Ppn(0), 1, data, {}).code() == StatusCode::invalid_argument);
  CHECK(memory.chip().counters().page_reads == 0);
}
