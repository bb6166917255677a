// The wrapper behind nand_latency=emulate: it changes nothing on the chip, and an operation
// lasts at least the simulated time the chip charged for it (sleep_for never returns early).
#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include "flashdir/nand/real_time_chip.h"
#include "support/test_chip.h"

using namespace flashdir;
using namespace flashdir::testing;

TEST_CASE("RealTimeChip passes operations through and lasts their simulated time") {
  const Geometry geometry{512, 64, 8, 4};
  TestChip test(Backend::memory, geometry, LatencyProfile::of(LatencyPreset::slc));
  RealTimeChip chip(test.chip(), test.clock());
  SeededRandom random(7);
  const PageImage page = random_page(geometry, random, 1);

  const auto start = std::chrono::steady_clock::now();
  REQUIRE(chip.program(Ppn(0), 1, page.data, page.oob).is_ok());
  std::vector<std::uint8_t> data(geometry.page_size_bytes), oob(geometry.oob_size_bytes);
  REQUIRE(chip.read(Ppn(0), 1, data, oob).is_ok());
  REQUIRE(chip.erase(BlockNumber(1)).is_ok());
  const auto elapsed = std::chrono::steady_clock::now() - start;

  CHECK(data == page.data);
  CHECK(chip.next_page(BlockNumber(0)) == 1);
  CHECK(chip.erase_count(BlockNumber(1)) == 1);
  CHECK(chip.counters().page_programs == 1);
  CHECK(test.clock().now_ns() > 0);
  CHECK(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count() >=
        static_cast<std::int64_t>(test.clock().now_ns()));
  // A refused operation charges nothing and sleeps for nothing.
  const std::uint64_t before = test.clock().now_ns();
  CHECK_FALSE(chip.program(Ppn(0), 1, page.data, page.oob).is_ok());
  CHECK(test.clock().now_ns() == before);
}
