// Damage that recovery's roll-forward meets (issue 8, item 1): a transient bit flip is read
// again, as host reads do; damage that a power cut cannot explain is never skipped silently
// (skipping rolled back durable writes on every mapping scheme).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "check/chip_scan.h"
#include "flashdir/nand/simulated_chip.h"
#include "ftl/ftl_core.h"
#include "ftl/layout.h"
#include "ftl/ram/ram_manager.h"
#include "ftl_harness.h"
#include "read_flips.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

constexpr format::MappingScheme kSchemes[] = {format::MappingScheme::cftl, format::MappingScheme::dftl,
                                              format::MappingScheme::page};
constexpr std::uint64_t kLpn = 3;

// Version 1 of LPNs [0, P) checkpointed, then version 2 written past the device RAM (durable
// at once) and the power cut before any flush: recovery must roll version 2 forward.
struct Rig {
  Geometry g = small_ftl_geometry();
  std::shared_ptr<PageStore> store = make_memory_store(g);
  SimClock clock;
  SimulatedChip chip{store, LatencyProfile::of(LatencyPreset::zero), clock};
  FtlOptions options;
  Ppn page;  // where version 2 of kLpn lives

  explicit Rig(format::MappingScheme scheme) : options(small_cache_options(scheme, format::GcPolicy::greedy)) {
    const std::uint32_t P = g.pages_per_block;
    {
      auto ftl = Ftl::format(chip, clock, options);
      REQUIRE_OK(ftl);
      REQUIRE_OK((*ftl)->write(Lpn(0), P, run_data(g, 0, P, 1)));
      REQUIRE_OK((*ftl)->close());
    }
    auto ftl = Ftl::open(chip, clock, options);
    REQUIRE_OK(ftl);
    auto seq = (*ftl)->write(Lpn(0), P, run_data(g, 0, P, 2));
    REQUIRE_OK(seq);
    REQUIRE((*ftl)->durable_seq() >= *seq);
    auto ppn = (*ftl)->core().ram().lookup(Lpn(kLpn), ftl::Access::internal);
    REQUIRE_OK(ppn);
    page = Ppn(*ppn);
    REQUIRE(g.page_in_block(page) + 1 < chip.next_page(g.block_of(page)));  // not the last page
  }

  std::uint64_t version(Ftl& ftl, std::uint64_t lpn) {
    std::vector<std::uint8_t> buffer(g.page_size_bytes);
    const Status s = ftl.read(Lpn(lpn), 1, buffer);
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    return version_of(lpn, buffer);
  }

  void damage(std::size_t oob_byte, bool in_data) { damage_page(page, oob_byte, in_data); }
  void damage_page(Ppn at, std::size_t oob_byte, bool in_data) {
    std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
    REQUIRE_OK(store->read_pages(at, 1, data, oob));
    (in_data ? data[100] : oob[oob_byte]) ^= 0x10;
    REQUIRE_OK(store->write_pages(at, 1, data, oob));
  }

  // What fsck's damage rule says of the damaged pages of `block` after an unclean shutdown.
  std::vector<BlockDamage> judged(BlockNumber block, std::vector<DamageVerdict>& verdicts) {
    auto layout = ftl::FtlLayout::compute(g, options.overprovision_permille);
    REQUIRE_OK(layout);
    DamageRule rule(false, layout->pool_first_block);
    std::vector<BlockDamage> found;
    ChipScanSummary summary;
    REQUIRE_OK(scan_chip(chip, summary, [&](BlockDamage d) { found.push_back(std::move(d)); }, {}));
    REQUIRE(found.size() == 1);
    REQUIRE(found[0].block == block);
    verdicts = rule.judge(found[0]);
    return found;
  }
};

}  // namespace

TEST_CASE("a bit that flips in a rolled-forward page's next read is read again", "[ftl][recovery][damage]") {
  // The roll-forward reads the page's record only; the flip lands in the first read of its
  // data, which reads it again, as every host read does.
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  ReadFlips flipping(rig.chip, 1);
  flipping.flip_next_read_of(rig.page);
  auto ftl = Ftl::open(flipping, rig.clock, rig.options);
  REQUIRE_OK(ftl);
  REQUIRE_FALSE((*ftl)->recovery().clean);
  CHECK((*ftl)->recovery().damaged_pages == 0);
  CHECK(flipping.flips() == 0);
  for (std::uint64_t lpn = 0; lpn < rig.g.pages_per_block; ++lpn) CHECK(rig.version(**ftl, lpn) == 2);
  CHECK(flipping.flips() == 1);
}

TEST_CASE("a durable page whose data is damaged reads as corrupt after recovery, never as its older version",
          "[ftl][recovery][damage][lost]") {
  // The roll-forward judges a page by its record (it reads no data); the page's own read
  // checks its data. fsck's replays read the data and map the page's LPN as lost.
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  rig.damage(0, true);
  auto ftl = Ftl::open(rig.chip, rig.clock, rig.options);
  REQUIRE_OK(ftl);
  REQUIRE_FALSE((*ftl)->recovery().clean);
  CHECK((*ftl)->recovery().damaged_pages == 0);
  std::vector<std::uint8_t> buffer(rig.g.page_size_bytes);
  CHECK((*ftl)->read(Lpn(kLpn), 1, buffer).code() == StatusCode::corruption);
  for (std::uint64_t lpn = 0; lpn < rig.g.pages_per_block; ++lpn) {
    if (lpn != kLpn) CHECK(rig.version(**ftl, lpn) == 2);
  }
}

TEST_CASE("fsck's replays read the data and map a durable page whose data is damaged as lost",
          "[ftl][recovery][damage][lost]") {
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  rig.damage(0, true);
  auto rebuilt = Ftl::rebuild(rig.chip, rig.clock, rig.options);
  REQUIRE_OK(rebuilt);
  CHECK((*rebuilt)->recovery().damaged_pages == 1);
  REQUIRE((*rebuilt)->lost_lpns() == std::vector<Lpn>{Lpn(kLpn)});
  std::vector<std::uint8_t> buffer(rig.g.page_size_bytes);
  CHECK((*rebuilt)->read(Lpn(kLpn), 1, buffer).code() == StatusCode::corruption);
  for (std::uint64_t lpn = 0; lpn < rig.g.pages_per_block; ++lpn) {
    if (lpn != kLpn) CHECK(rig.version(**rebuilt, lpn) == 2);
  }
}

TEST_CASE("recovery refuses a damaged record that verified pages follow, naming it", "[ftl][recovery][damage]") {
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  rig.damage(20, false);  // the record's sequence: the record no longer verifies
  const auto opened = Ftl::open(rig.chip, rig.clock, rig.options);
  REQUIRE_FALSE(opened.is_ok());
  CHECK(opened.status().code() == StatusCode::corruption);
  CHECK_THAT(opened.status().message(), Catch::Contains(fmt::format("page {} (block", rig.page.value)) &&
                                            Catch::Contains("media damage"));
  // The rebuild a repair runs goes past it (fsck reports the page) and erases it.
  auto rebuilt = Ftl::rebuild(rig.chip, rig.clock, rig.options);
  REQUIRE_OK(rebuilt);
  REQUIRE_OK((*rebuilt)->close());
  auto ftl = Ftl::open(rig.chip, rig.clock, rig.options);
  REQUIRE_OK(ftl);
  CHECK((*ftl)->recovery().clean);
}

TEST_CASE("the damaged pages that end a block are torn for recovery and for fsck alike", "[ftl][recovery][damage]") {
  // A program of several pages cut short leaves every page it did not finish damaged (an image
  // file's process killed between the block table and the pages, say): both must skip them.
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  const BlockNumber block = rig.g.block_of(rig.page);
  const std::uint32_t programmed = rig.chip.next_page(block);
  rig.damage_page(rig.g.page_at(block, programmed - 1), 20, false);
  rig.damage_page(rig.g.page_at(block, programmed - 2), 20, false);
  std::vector<DamageVerdict> verdicts;
  rig.judged(block, verdicts);
  CHECK(verdicts == std::vector<DamageVerdict>{DamageVerdict::torn_program, DamageVerdict::torn_program});
  auto ftl = Ftl::open(rig.chip, rig.clock, rig.options);
  REQUIRE_OK(ftl);
  CHECK((*ftl)->recovery().damaged_pages == 2);
}

TEST_CASE("a damaged page that a whole record follows is media damage for recovery and for fsck alike",
          "[ftl][recovery][damage]") {
  // A page whose record verifies was programmed to the end, after any page before it: a damaged
  // page before it was not torn by a cut, and neither was its own data.
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  const BlockNumber block = rig.g.block_of(rig.page);
  const std::uint32_t programmed = rig.chip.next_page(block);
  const Ppn torn_looking = rig.g.page_at(block, programmed - 2);
  rig.damage_page(rig.g.page_at(block, programmed - 1), 0, true);
  rig.damage_page(torn_looking, 20, false);
  std::vector<DamageVerdict> verdicts;
  const std::vector<BlockDamage> found = rig.judged(block, verdicts);
  CHECK(verdicts == std::vector<DamageVerdict>{DamageVerdict::unexplained, DamageVerdict::unexplained});
  DamageRule rule(false, 0);
  CHECK_THAT(rule.unexplained_reason(found[0], found[0].pages[0]), Catch::Contains("whole records follow it"));
  CHECK_THAT(rule.unexplained_reason(found[0], found[0].pages[1]), Catch::Contains("its OOB record verifies"));
  const auto opened = Ftl::open(rig.chip, rig.clock, rig.options);
  REQUIRE_FALSE(opened.is_ok());
  CHECK(opened.status().code() == StatusCode::corruption);
  CHECK_THAT(opened.status().message(), Catch::Contains(fmt::format("page {} (block", torn_looking.value)) &&
                                            Catch::Contains("media damage"));
}
