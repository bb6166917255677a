// A page whose data or OOB record fails verification on every read is reported upward as a
// corruption error, never returned as data (DESIGN.md, "ftl — logical pages"): host data pages
// and translation pages, on every mapping scheme. The damage is in the medium itself, so the
// FTL's re-reads (meant for transient bit flips) see it every time.
#include <catch2/catch.hpp>

#include "ftl/ftl_core.h"
#include "ftl/ram/ram_manager.h"
#include "flashdir/nand/simulated_chip.h"
#include "ftl_harness.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

enum class Damage { data, oob };

const char* damage_name(Damage damage) { return damage == Damage::data ? "data" : "OOB record"; }

constexpr format::MappingScheme kSchemes[] = {format::MappingScheme::cftl, format::MappingScheme::dftl,
                                              format::MappingScheme::page};
constexpr std::uint64_t kLpn = 5;

// LPNs [0, 16) written and the FTL closed; where LPN 5 and its translation page ended up.
struct Rig {
  Geometry g = small_ftl_geometry();
  std::shared_ptr<PageStore> store = make_memory_store(g);
  SimClock clock;
  SimulatedChip chip{store, LatencyProfile::of(LatencyPreset::zero), clock};
  FtlOptions options;
  Ppn data_page;
  Ppn translation_page;

  explicit Rig(format::MappingScheme scheme) : options(small_cache_options(scheme, format::GcPolicy::dual_greedy)) {
    {
      auto ftl = Ftl::format(chip, clock, options);
      REQUIRE_OK(ftl);
      REQUIRE_OK((*ftl)->write(Lpn(0), 16, run_data(g, 0, 16, 1)));
      REQUIRE_OK((*ftl)->close());
    }
    // Opened and dropped without a change: the next open is clean again, with nothing cached.
    auto ftl = open();
    REQUIRE_OK(ftl);
    ftl::FtlCore& core = (*ftl)->core();
    auto ppn = core.ram().lookup(Lpn(kLpn), ftl::Access::internal);
    REQUIRE_OK(ppn);
    data_page = Ppn(*ppn);
    translation_page = Ppn(core.gtd()[core.layout().tpn_of(Lpn(kLpn))]);
  }

  Result<std::unique_ptr<Ftl>> open() { return Ftl::open(chip, clock, options); }

  // Flips one bit of what the medium holds for `page`.
  void damage(Ppn page, Damage where) {
    std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
    REQUIRE_OK(store->read_pages(page, 1, data, oob));
    (where == Damage::data ? data[100] : oob[20]) ^= 0x10;
    REQUIRE_OK(store->write_pages(page, 1, data, oob));
  }

  Status read(Ftl& ftl, std::uint64_t first, std::uint32_t count) {
    std::vector<std::uint8_t> buffer(std::size_t{count} * g.page_size_bytes);
    return ftl.read(Lpn(first), count, buffer);
  }
};

}  // namespace

TEST_CASE("a data page that fails verification on every read is a corruption error", "[ftl][corruption]") {
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  const auto where = GENERATE(Damage::data, Damage::oob);
  INFO(format::mapping_scheme_name(scheme) << ", damaged " << damage_name(where));
  Rig rig(scheme);
  rig.damage(rig.data_page, where);
  auto ftl = rig.open();
  REQUIRE_OK(ftl);
  const Status alone = rig.read(**ftl, kLpn, 1);
  CHECK(alone.code() == StatusCode::corruption);
  CHECK_THAT(alone.message(), Catch::Contains("LPN 5"));
  CHECK(rig.read(**ftl, 0, 16).code() == StatusCode::corruption);  // in a run
  std::vector<std::uint8_t> neighbour(rig.g.page_size_bytes);
  REQUIRE_OK((*ftl)->read(Lpn(kLpn + 1), 1, neighbour));
  CHECK(version_of(kLpn + 1, neighbour) == 1);
}

TEST_CASE("a translation page that fails verification on every read is a corruption error", "[ftl][corruption]") {
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  const auto where = GENERATE(Damage::data, Damage::oob);
  INFO(format::mapping_scheme_name(scheme) << ", damaged " << damage_name(where));
  Rig rig(scheme);
  rig.damage(rig.translation_page, where);
  auto ftl = rig.open();
  if (scheme == format::MappingScheme::page) {
    // The whole map is loaded at open.
    REQUIRE_FALSE(ftl.is_ok());
    CHECK(ftl.status().code() == StatusCode::corruption);
    return;
  }
  REQUIRE_OK(ftl);
  const Status s = rig.read(**ftl, kLpn, 1);
  CHECK(s.code() == StatusCode::corruption);
  CHECK_THAT(s.message(), Catch::Contains("translation page"));
}
