// The rules of a real chip, enforced on every backend.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "support/test_chip.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

const Geometry kGeometry{512, 64, 8, 6};

std::vector<std::uint8_t> data_for(const Geometry& g, std::uint32_t pages, std::uint8_t fill) {
  return std::vector<std::uint8_t>(std::size_t{pages} * g.page_size_bytes, fill);
}
std::vector<std::uint8_t> oob_for(const Geometry& g, std::uint32_t pages, std::uint8_t fill) {
  return std::vector<std::uint8_t>(std::size_t{pages} * g.oob_size_bytes, fill);
}

Status program(NandChip& chip, std::uint64_t first, std::uint32_t pages, std::uint8_t fill = 0x11) {
  const auto data = data_for(chip.geometry(), pages, fill);
  const auto oob = oob_for(chip.geometry(), pages, fill);
  return chip.program(Ppn(first), pages, data, oob);
}

}  // namespace

TEST_CASE("chip rules", "[nand]") {
  const Backend backend = GENERATE(from_range(std::begin(kAllBackends), std::end(kAllBackends)));
  INFO("backend " << backend_label(backend));
  TestChip test(backend, kGeometry);
  NandChip& chip = test.chip();  // stale after test.reopen()
  const Geometry g = chip.geometry();

  SECTION("a fresh chip is erased and reads 0xFF") {
    auto data = data_for(g, 2, 0);
    auto oob = oob_for(g, 2, 0);
    REQUIRE(chip.read(Ppn(3), 2, data, oob).is_ok());
    CHECK(format::is_erased(data));
    CHECK(format::is_erased(oob));
    CHECK(chip.next_page(BlockNumber(0)) == 0);
  }

  SECTION("pages program in order and read back") {
    REQUIRE(program(chip, 0, 3, 0x21).is_ok());
    REQUIRE(program(chip, 3, 1, 0x22).is_ok());
    CHECK(chip.next_page(BlockNumber(0)) == 4);
    CHECK(chip.is_programmed(Ppn(3)));
    CHECK_FALSE(chip.is_programmed(Ppn(4)));
    auto data = data_for(g, 5, 0);
    auto oob = oob_for(g, 5, 0);
    REQUIRE(chip.read(Ppn(0), 5, data, oob).is_ok());
    CHECK(oob[0] == 0x21);
    CHECK(oob[3 * g.oob_size_bytes] == 0x22);
    CHECK(oob[4 * g.oob_size_bytes] == 0xFF);  // erased
    CHECK(data[0] == 0x21);                    // pages programmed with data keep it, on every backend
    CHECK(data[3 * g.page_size_bytes] == 0x22);
    CHECK(data[4 * g.page_size_bytes] == 0xFF);
  }

  SECTION("programming a programmed page is refused") {
    REQUIRE(program(chip, 0, 2).is_ok());
    const Status s = program(chip, 1, 1);
    CHECK(s.code() == StatusCode::invalid_argument);
    CHECK_THAT(s.message(), Catch::Contains("next programmable page of block 0 is 2"));
  }

  SECTION("programming out of order is refused and changes nothing") {
    const Status s = program(chip, 2, 1);
    CHECK(s.code() == StatusCode::invalid_argument);
    CHECK_THAT(s.message(), Catch::Contains("out of order"));
    CHECK(chip.next_page(BlockNumber(0)) == 0);
  }

  SECTION("a full block refuses further programs until erased") {
    REQUIRE(program(chip, 0, g.pages_per_block).is_ok());
    CHECK_THAT(program(chip, 0, 1).message(), Catch::Contains("block full"));
    REQUIRE(chip.erase(BlockNumber(0)).is_ok());
    CHECK(chip.next_page(BlockNumber(0)) == 0);
    CHECK(chip.erase_count(BlockNumber(0)) == 1);
    REQUIRE(program(chip, 0, 1).is_ok());
  }

  SECTION("erase returns pages to 0xFF") {
    REQUIRE(program(chip, 8, 4).is_ok());
    REQUIRE(chip.erase(BlockNumber(1)).is_ok());
    auto oob = oob_for(g, 4, 0);
    REQUIRE(chip.read(Ppn(8), 4, {}, oob).is_ok());
    CHECK(format::is_erased(oob));
  }

  SECTION("a run may cross into the next block only at its first page") {
    REQUIRE(program(chip, 0, g.pages_per_block - 2).is_ok());
    REQUIRE(program(chip, g.pages_per_block - 2, 4).is_ok());  // 2 pages in block 0, 2 in block 1
    CHECK(chip.next_page(BlockNumber(0)) == g.pages_per_block);
    CHECK(chip.next_page(BlockNumber(1)) == 2);
    // A run whose second part lands mid-block is refused whole.
    REQUIRE(program(chip, 2 * g.pages_per_block, g.pages_per_block - 1).is_ok());
    CHECK_THAT(program(chip, g.pages_per_block + 2, g.pages_per_block).message(), Catch::Contains("out of order"));
    CHECK(chip.next_page(BlockNumber(1)) == 2);
  }

  SECTION("addresses out of range are refused") {
    const std::uint64_t pages = g.page_count();
    CHECK_THAT(program(chip, pages, 1).message(), Catch::Contains("out of range"));
    CHECK_THAT(program(chip, pages - 1, 2).message(), Catch::Contains("out of range"));
    auto oob = oob_for(g, 1, 0);
    CHECK(chip.read(Ppn(pages), 1, {}, oob).code() == StatusCode::invalid_argument);
    CHECK(chip.read(Ppn(UINT64_MAX), 1, {}, oob).code() == StatusCode::invalid_argument);
    CHECK_THAT(chip.erase(BlockNumber(g.block_count)).message(), Catch::Contains("out of range"));
    CHECK(program(chip, 0, 0).code() == StatusCode::invalid_argument);
  }

  SECTION("queries about a block out of range answer: nothing programmed, never erased") {
    for (const std::uint64_t block : {g.block_count, g.block_count + 1, UINT64_MAX}) {
      INFO("block " << block);
      CHECK(chip.next_page(BlockNumber(block)) == 0);
      CHECK(chip.erase_count(BlockNumber(block)) == 0);
    }
    CHECK_FALSE(chip.is_programmed(Ppn(g.page_count())));
    CHECK_FALSE(chip.is_programmed(Ppn(UINT64_MAX)));
  }

  SECTION("buffers must have exactly the size of the run") {
    auto short_data = data_for(g, 1, 0);
    auto oob = oob_for(g, 2, 0);
    CHECK_THAT(chip.read(Ppn(0), 2, short_data, oob).message(), Catch::Contains("data buffer"));
    auto long_oob = oob_for(g, 3, 0);
    auto data = data_for(g, 2, 0);
    CHECK_THAT(chip.read(Ppn(0), 2, data, long_oob).message(), Catch::Contains("OOB buffer"));
    CHECK(chip.read(Ppn(0), 2, {}, {}).code() == StatusCode::invalid_argument);
    CHECK(chip.program(Ppn(0), 2, data, long_oob).code() == StatusCode::invalid_argument);
    CHECK(chip.program(Ppn(0), 2, data, {}).code() == StatusCode::invalid_argument);
    if (chip.stores_data()) {
      CHECK_THAT(chip.program(Ppn(0), 2, {}, oob).message(), Catch::Contains("data buffer"));
    } else {
      // Metadata-only needs no data; such pages read back as zeros.
      REQUIRE(chip.program(Ppn(0), 2, {}, oob).is_ok());
      REQUIRE(chip.read(Ppn(0), 2, data, {}).is_ok());
      CHECK(std::all_of(data.begin(), data.end(), [](std::uint8_t b) { return b == 0; }));
    }
  }

  SECTION("state survives reopening the medium") {
    REQUIRE(program(chip, 0, 5, 0x33).is_ok());
    REQUIRE(chip.erase(BlockNumber(2)).is_ok());
    REQUIRE(chip.erase(BlockNumber(2)).is_ok());
    test.reopen();
    NandChip& again = test.chip();
    CHECK(again.next_page(BlockNumber(0)) == 5);
    CHECK(again.erase_count(BlockNumber(2)) == 2);
    auto oob = oob_for(g, 1, 0);
    REQUIRE(again.read(Ppn(4), 1, {}, oob).is_ok());
    CHECK(oob[0] == 0x33);
  }
}

TEST_CASE("the chip counts operations and advances its clock", "[nand]") {
  TestChip test(Backend::memory, kGeometry, LatencyProfile::of(LatencyPreset::slc));
  NandChip& chip = test.chip();
  REQUIRE(program(chip, 0, 3).is_ok());
  auto oob = oob_for(kGeometry, 2, 0);
  REQUIRE(chip.read(Ppn(0), 2, {}, oob).is_ok());
  REQUIRE(chip.erase(BlockNumber(0)).is_ok());
  REQUIRE(chip.erase(BlockNumber(0)).is_ok());
  REQUIRE(chip.erase(BlockNumber(4)).is_ok());
  CHECK(chip.counters().page_programs == 3);
  CHECK(chip.counters().page_reads == 2);
  CHECK(chip.counters().block_erases == 3);
  CHECK(chip.erase_count(BlockNumber(0)) == 2);
  CHECK(chip.erase_count(BlockNumber(4)) == 1);
  CHECK(chip.erase_count(BlockNumber(1)) == 0);
  const std::uint64_t expected_ns = (3 * 200 + 2 * 25 + 3 * 1500) * 1000ULL;
  CHECK(chip.counters().busy_ns == expected_ns);
  CHECK(test.clock().now_ns() == expected_ns);
  // Refused requests cost nothing.
  CHECK_FALSE(program(chip, 5, 1).is_ok());
  CHECK(test.clock().now_ns() == expected_ns);
}
