#include <catch2/catch.hpp>

#include "flashdir/geometry.h"

using namespace flashdir;

TEST_CASE("geometry validation names the bad value", "[nand][geometry]") {
  Geometry g{4096, 64, 128, 16};
  REQUIRE(g.validate().is_ok());

  auto message_with = [&](auto change) {
    Geometry copy = g;
    change(copy);
    const Status s = copy.validate();
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.code() == StatusCode::invalid_argument);
    return s.message();
  };
  CHECK_THAT(message_with([](Geometry& x) { x.page_size_bytes = 0; }), Catch::Contains("page size 0"));
  CHECK_THAT(message_with([](Geometry& x) { x.page_size_bytes = 4000; }), Catch::Contains("page size 4000"));
  CHECK_THAT(message_with([](Geometry& x) { x.page_size_bytes = 256; }), Catch::Contains("page size 256"));
  CHECK_THAT(message_with([](Geometry& x) { x.oob_size_bytes = 16; }), Catch::Contains("OOB size 16"));
  CHECK_THAT(message_with([](Geometry& x) { x.pages_per_block = 1; }), Catch::Contains("pages per block 1"));
  CHECK_THAT(message_with([](Geometry& x) { x.block_count = 0; }), Catch::Contains("block count"));
}

TEST_CASE("a capacity must be a whole number of blocks", "[nand][geometry]") {
  auto ok = geometry_for_capacity(64ULL << 20, 4096, 64, 128);
  REQUIRE(ok.is_ok());
  CHECK(ok->block_count == 128);
  CHECK(ok->capacity_bytes() == 64ULL << 20);

  auto partial = geometry_for_capacity((64ULL << 20) + 4096, 4096, 64, 128);
  REQUIRE_FALSE(partial.is_ok());
  CHECK_THAT(partial.status().message(), Catch::Contains("67112960") && Catch::Contains("whole number"));

  CHECK_FALSE(geometry_for_capacity(0, 4096, 64, 128).is_ok());
  CHECK_THAT(geometry_for_capacity(64ULL << 20, 1000, 64, 128).status().message(), Catch::Contains("page size 1000"));
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
