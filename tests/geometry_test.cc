#include <catch2/catch.hpp>

#include "flashdir/geometry.h"

using namespace flashdir;

namespace {

// The message of `change` applied to `g`, which validate() must refuse as an invalid argument.
template <typename Change>
std::string refusal(Geometry g, Change change) {
  change(g);
  const Status s = g.validate();
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == StatusCode::invalid_argument);
  return s.message();
}

}  // namespace

TEST_CASE("geometry validation names the bad value", "[nand][geometry]") {
  Geometry g{4096, 64, 128, 16};
  REQUIRE(g.validate().is_ok());

  auto message_with = [&](auto change) { return refusal(g, change); };
  CHECK_THAT(message_with([](Geometry& x) { x.page_size_bytes = 0; }), Catch::Contains("page size 0"));
  CHECK_THAT(message_with([](Geometry& x) { x.page_size_bytes = 4000; }), Catch::Contains("page size 4000"));
  CHECK_THAT(message_with([](Geometry& x) { x.page_size_bytes = 256; }), Catch::Contains("page size 256"));
  CHECK_THAT(message_with([](Geometry& x) { x.oob_size_bytes = 16; }), Catch::Contains("OOB size 16"));
  CHECK_THAT(message_with([](Geometry& x) { x.pages_per_block = 1; }), Catch::Contains("pages per block 1"));
  CHECK_THAT(message_with([](Geometry& x) { x.block_count = 0; }), Catch::Contains("block count"));
}

TEST_CASE("geometry validation enforces the upper limits", "[nand][geometry]") {
  Geometry g{Geometry::kMaxPageSizeBytes, Geometry::kMaxOobSizeBytes, Geometry::kMaxPagesPerBlock, 1};
  g.block_count = Geometry::max_block_count(g.pages_per_block);
  REQUIRE(g.validate().is_ok());  // every limit is inclusive

  auto message_with = [&](auto change) { return refusal(g, change); };
  CHECK_THAT(message_with([](Geometry& x) { x.page_size_bytes = 2 * Geometry::kMaxPageSizeBytes; }),
             Catch::Contains("page size 131072 B is outside [512, 65536]"));
  CHECK_THAT(message_with([](Geometry& x) { x.oob_size_bytes = Geometry::kMaxOobSizeBytes + 1; }),
             Catch::Contains("OOB size 4097 B is outside [48, 4096]"));
  CHECK_THAT(message_with([](Geometry& x) { x.pages_per_block = Geometry::kMaxPagesPerBlock + 1; }),
             Catch::Contains("pages per block 65537 is outside [2, 65536]"));
  CHECK_THAT(message_with([](Geometry& x) { ++x.block_count; }), Catch::Contains("block count 16777217 is too large"));
  // The block limit follows the block size: the largest count for 128 pages is too many for 256.
  Geometry small{4096, 64, 128, Geometry::max_block_count(128)};
  CHECK(small.validate().is_ok());
  small.pages_per_block = 256;
  CHECK_FALSE(small.validate().is_ok());
}

TEST_CASE("single-field checks agree with the whole-geometry check", "[nand][geometry]") {
  CHECK(Geometry::check_page_size(4096).is_ok());
  CHECK_THAT(Geometry::check_page_size(3000).message(), Catch::Contains("page size 3000"));
  CHECK(Geometry::check_oob_size(48).is_ok());
  CHECK_THAT(Geometry::check_oob_size(47).message(), Catch::Contains("OOB size 47"));
  CHECK(Geometry::check_pages_per_block(2).is_ok());
  CHECK_THAT(Geometry::check_pages_per_block(1).message(), Catch::Contains("pages per block 1"));
}

TEST_CASE("address arithmetic", "[nand][geometry]") {
  const Geometry g{4096, 64, 128, 16};
  CHECK(g.block_of(Ppn(300)) == BlockNumber(2));
  CHECK(g.page_in_block(Ppn(300)) == 44);
  CHECK(g.first_page(BlockNumber(2)) == Ppn(256));
  CHECK(g.page_at(BlockNumber(3), 5) == Ppn(389));
  CHECK(g.page_count() == 2048);
}

TEST_CASE("latency presets", "[nand][geometry]") {
  const auto slc = LatencyProfile::parse("slc");
  REQUIRE(slc.is_ok());
  CHECK(slc->read_us == 25);
  CHECK(slc->program_us == 200);
  CHECK(slc->erase_us == 1500);
  CHECK(LatencyProfile::parse("mlc")->program_us > slc->program_us);
  CHECK(LatencyProfile::parse("zero")->erase_us == 0);
  CHECK_THAT(LatencyProfile::parse("tlc").status().message(), Catch::Contains("tlc"));
}
