// The fault-injecting wrapper: where it cuts, what the cut leaves, and bit flips.
#include <catch2/catch.hpp>
#include <vector>

#include "flashdir/nand/faulty_chip.h"
#include "support/test_chip.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

const Geometry kGeometry{512, 64, 8, 4};

Status program_pages(NandChip& chip, std::uint64_t first, std::uint32_t count, SeededRandom& random,
                     std::uint64_t sequence = 1) {
  std::vector<std::uint8_t> data, oob;
  for (std::uint32_t i = 0; i < count; ++i) {
    const PageImage page = random_page(chip.geometry(), random, sequence + i);
    const ConstByteSpan page_data = data_to_program(chip, page);
    data.insert(data.end(), page_data.begin(), page_data.end());
    oob.insert(oob.end(), page.oob.begin(), page.oob.end());
  }
  return chip.program(Ppn(first), count, data, oob);
}

// A plan that cuts the power at operation `index`, doing `in_flight` to the operation there.
FaultPlan cut_at(std::uint64_t index, InFlight in_flight, std::uint64_t seed = 1) {
  FaultPlan plan;
  plan.seed = seed;
  plan.cut_at_operation = index;
  plan.in_flight = in_flight;
  return plan;
}

// True if the page's OOB record or data fails verification.
bool damaged(NandChip& chip, Ppn page) {
  std::vector<std::uint8_t> data(chip.geometry().page_size_bytes), oob(chip.geometry().oob_size_bytes);
  REQUIRE(chip.read(page, 1, data, oob).is_ok());
  auto record = format::decode_oob(oob);
  if (!record.is_ok()) return true;
  return chip.stores_data() && format::xxh3(data) != record->data_hash;
}

}  // namespace

TEST_CASE("a cut asked for at the next program lets reads pass and tears that program's first page",
          "[nand][faults]") {
  TestChip test(Backend::memory, kGeometry);
  SeededRandom random(7);
  FaultPlan plan;
  plan.in_flight = InFlight::torn;
  FaultyChip chip(test.chip(), plan);
  REQUIRE(program_pages(chip, 0, 2, random).is_ok());
  chip.cut_at_next_program();
  std::vector<std::uint8_t> oob(64);
  REQUIRE(chip.read(Ppn(0), 1, {}, oob).is_ok());  // a read is not a program: no cut
  CHECK_FALSE(chip.power_lost());
  CHECK(program_pages(chip, 2, 3, random).code() == StatusCode::power_lost);
  CHECK(chip.cut().operation == CutReport::Operation::program);
  CHECK(chip.cut().page == Ppn(2));
  CHECK(chip.cut().torn);
  CHECK(damaged(test.chip(), Ppn(2)));
  CHECK(test.chip().next_page(BlockNumber(0)) == 3);  // nothing after the torn page landed
}

TEST_CASE("a cut fails the operation in flight and every later one", "[nand][faults]") {
  TestChip test(Backend::memory, kGeometry);
  SeededRandom random(7);
  FaultyChip chip(test.chip(), cut_at(5, InFlight::dropped));

  REQUIRE(program_pages(chip, 0, 3, random).is_ok());  // operations 0..2
  std::vector<std::uint8_t> oob(64);
  REQUIRE(chip.read(Ppn(0), 1, {}, oob).is_ok());        // operation 3
  const Status cut = program_pages(chip, 3, 4, random);  // operations 4..7: 5 is in flight
  CHECK(cut.code() == StatusCode::power_lost);
  CHECK(chip.power_lost());
  CHECK(chip.cut().operation_index == 5);
  CHECK(chip.cut().page == Ppn(4));
  CHECK_FALSE(chip.cut().torn);
  CHECK(test.chip().next_page(BlockNumber(0)) == 4);  // page 3 landed, 4 was dropped

  CHECK(chip.read(Ppn(0), 1, {}, oob).code() == StatusCode::power_lost);
  CHECK(chip.erase(BlockNumber(1)).code() == StatusCode::power_lost);
  CHECK(chip.sync().code() == StatusCode::power_lost);
  CHECK(program_pages(chip, 4, 1, random).code() == StatusCode::power_lost);
  CHECK_THAT(chip.read(Ppn(0), 1, {}, oob).message(), Catch::Contains("operation 5"));
}

TEST_CASE("a rule violation is reported as such even when a cut is due", "[nand][faults]") {
  TestChip test(Backend::memory, kGeometry);
  SeededRandom random(7);
  FaultPlan plan;
  plan.cut_at_operation = 0;
  FaultyChip chip(test.chip(), plan);
  CHECK(program_pages(chip, 3, 1, random).code() == StatusCode::invalid_argument);
  CHECK_FALSE(chip.power_lost());
}

TEST_CASE("a torn program leaves a page that fails verification", "[nand][faults]") {
  const Backend backend = GENERATE(from_range(std::begin(kAllBackends), std::end(kAllBackends)));
  INFO("backend " << backend_label(backend));
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    TestChip test(backend, kGeometry);
    SeededRandom random(seed);
    FaultyChip chip(test.chip(), cut_at(2, InFlight::torn, seed));
    REQUIRE(program_pages(chip, 0, 4, random).code() == StatusCode::power_lost);
    REQUIRE(chip.cut().torn);
    test.reopen();
    NandChip& after = test.chip();
    CHECK(after.next_page(BlockNumber(0)) == 3);
    CHECK_FALSE(damaged(after, Ppn(0)));
    CHECK_FALSE(damaged(after, Ppn(1)));
    // The torn page is caught, unless every byte that matters landed before the cut (only the
    // zero padding after the 48-byte record was garbled), which makes it a complete page.
    const std::uint32_t meaningful =
        (after.stores_data() ? kGeometry.page_size_bytes : 0) + static_cast<std::uint32_t>(format::kOobRecordSize);
    INFO("seed " << seed << ", torn after " << chip.cut().torn_prefix_bytes << " bytes");
    CHECK(damaged(after, Ppn(2)) == (chip.cut().torn_prefix_bytes < meaningful));
  }
}

TEST_CASE("InFlight::either tears some cuts and drops others, each as its seed says", "[nand][faults]") {
  auto cut_with = [](std::uint64_t seed) {
    TestChip test(Backend::memory, kGeometry);
    SeededRandom random(seed);
    FaultyChip chip(test.chip(), cut_at(1, InFlight::either, seed));
    REQUIRE(program_pages(chip, 0, 2, random).code() == StatusCode::power_lost);
    // Dropped: page 1 never reached the chip; torn: it holds charge.
    CHECK(test.chip().next_page(BlockNumber(0)) == (chip.cut().torn ? 2u : 1u));
    return chip.cut().torn;
  };
  int torn = 0;
  int dropped = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const bool was_torn = cut_with(seed);
    CHECK(cut_with(seed) == was_torn);  // replays
    ++(was_torn ? torn : dropped);
  }
  INFO(torn << " torn, " << dropped << " dropped");
  CHECK(torn > 0);
  CHECK(dropped > 0);
}

TEST_CASE("a torn erase leaves a block that is neither erased nor intact", "[nand][faults]") {
  TestChip test(Backend::image, kGeometry);
  SeededRandom random(3);
  REQUIRE(program_pages(test.chip(), 8, 8, random).is_ok());
  FaultyChip chip(test.chip(), cut_at(0, InFlight::torn, 11));
  REQUIRE(chip.erase(BlockNumber(1)).code() == StatusCode::power_lost);
  const std::uint32_t garbage = chip.cut().torn_garbage_pages;
  REQUIRE(garbage >= 1);
  test.reopen();
  NandChip& after = test.chip();
  CHECK(after.erase_count(BlockNumber(1)) == 1);
  CHECK(after.next_page(BlockNumber(1)) == garbage);
  for (std::uint32_t i = 0; i < garbage; ++i) CHECK(damaged(after, Ppn(8 + i)));
}

TEST_CASE("a random cut happens at a reproducible operation", "[nand][faults]") {
  auto cut_index = [](std::uint64_t seed) {
    TestChip test(Backend::metadata, kGeometry);
    SeededRandom random(1);
    FaultPlan plan;
    plan.seed = seed;
    plan.cut_one_in = 10;
    FaultyChip chip(test.chip(), plan);
    for (std::uint64_t block = 0; block < 4 && !chip.power_lost(); ++block) {
      for (std::uint32_t page = 0; page < 8 && !chip.power_lost(); ++page) {
        (void)program_pages(chip, block * 8 + page, 1, random);  // fails once the power is gone
      }
    }
    return chip.power_lost() ? static_cast<std::int64_t>(chip.cut().operation_index) : -1;
  };
  CHECK(cut_index(5) == cut_index(5));
  CHECK(cut_index(5) >= 0);
}

TEST_CASE("bit flips on read are caught by the checksums", "[nand][faults]") {
  // An OOB area exactly the size of the record: every byte a flip can hit is checked.
  TestChip test(Backend::memory, Geometry{512, format::kOobRecordSize, 8, 4});
  SeededRandom random(9);
  REQUIRE(program_pages(test.chip(), 0, 8, random).is_ok());
  FaultPlan plan;
  plan.seed = 4;
  plan.bit_flip_one_in = 1;  // every page read
  FaultyChip chip(test.chip(), plan);
  for (std::uint64_t p = 0; p < 8; ++p) CHECK(damaged(chip, Ppn(p)));
  CHECK(chip.bit_flips() == 8);
  CHECK_FALSE(damaged(test.chip(), Ppn(0)));  // the medium itself is intact
}
