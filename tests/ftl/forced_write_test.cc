// Forced writes and make_durable(): what cache metadata needs from the FTL (doc/ftl.md,
// "forced writes"). A forced write is on the chip when it returns, and so is a buffered page
// once make_durable() returns for it; a power cut right after must find them, on every mapping
// scheme and RAM policy, while an ordinary buffered write may be lost.
#include <catch2/catch.hpp>

#include "ftl_harness.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

const format::MappingScheme kSchemes[] = {format::MappingScheme::cftl, format::MappingScheme::dftl,
                                          format::MappingScheme::page};

std::uint64_t read_version(Ftl& ftl, const Geometry& g, std::uint64_t lpn) {
  std::vector<std::uint8_t> page(g.page_size_bytes);
  REQUIRE_OK(ftl.read(Lpn(lpn), 1, page));
  return version_of(lpn, page);
}

}  // namespace

TEST_CASE("forced writes and make_durable survive a power cut that loses the RAM buffer", "[ftl][forced]") {
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  const auto ram = GENERATE(from_range(std::begin(kRamPolicies), std::end(kRamPolicies)));
  INFO("scheme " << format::mapping_scheme_name(scheme) << ", RAM " << format::ram_policy_name(ram));
  const Geometry g = small_ftl_geometry();
  TestChip chip(Backend::memory, g);
  const FtlOptions options = small_cache_options(scheme, format::GcPolicy::dual_greedy, ram);
  auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  Ftl& f = **ftl;

  // Page 5 waits in the RAM buffer; page 7 is buffered, then overtaken by a forced write.
  REQUIRE_OK(f.write(Lpn(5), 1, run_data(g, 5, 1, 1)));
  REQUIRE_OK(f.write(Lpn(7), 1, run_data(g, 7, 1, 1)));
  auto forced = f.write(Lpn(7), 1, run_data(g, 7, 1, 2), WriteHint::none, Durability::forced);
  REQUIRE_OK(forced);
  REQUIRE_OK(f.write(Lpn(6), 1, run_data(g, 6, 1, 3), WriteHint::none, Durability::forced));
  CHECK(f.stats().forced_write_pages == 2);
  CHECK(read_version(f, g, 7) == 2);          // the older buffered copy is gone from RAM
  auto last = f.write(Lpn(9), 1, run_data(g, 9, 1, 4));
  REQUIRE_OK(last);
  REQUIRE_OK(f.make_durable(Lpn(8), 2));      // 8 was never written: only 9 is programmed
  CHECK(f.stats().forced_program_pages == 1);
  CHECK(read_version(f, g, 9) == 4);

  SECTION("a cut now keeps the forced pages and the page made durable") {
    ftl = Status::io_error("power cut");  // the RAM buffer is lost with the FTL object
    chip.reopen();
    auto reopened = Ftl::open(chip.chip(), chip.clock(), options);
    REQUIRE_OK(reopened);
    CHECK(read_version(**reopened, g, 7) == 2);
    CHECK(read_version(**reopened, g, 6) == 3);
    CHECK(read_version(**reopened, g, 9) == 4);
    const std::uint64_t five = read_version(**reopened, g, 5);
    CHECK((five == 0 || five == 1));  // buffered: may or may not have reached the chip
  }

  SECTION("a flush never lets the overtaken buffered copy reach the chip") {
    REQUIRE_OK(f.flush());
    CHECK(f.durable_seq() == *last);
    REQUIRE_OK(f.close());
    ftl = Status::io_error("closed");
    chip.reopen();
    auto reopened = Ftl::open(chip.chip(), chip.clock(), options);
    REQUIRE_OK(reopened);
    CHECK(read_version(**reopened, g, 7) == 2);
    CHECK(read_version(**reopened, g, 5) == 1);
  }

  SECTION("make_durable of every buffered page lifts the watermark to the last write") {
    REQUIRE_OK(f.make_durable(Lpn(0), 16));
    CHECK(f.durable_seq() == *last);
    CHECK(f.make_durable(Lpn(f.logical_pages() - 1), 2).code() == StatusCode::invalid_argument);
  }
}
