// Lost pages (doc/ftl.md, "Lost pages"): an LPN whose data is gone reads as a corruption
// error until it is written or trimmed, never as zeros or an older version; the FTL lists it,
// keeps it across power cuts and restarts, and goes on working around it.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "flashdir/nand/simulated_chip.h"
#include "flashdir/random.h"
#include "ftl/ftl_core.h"
#include "ftl/ram/ram_manager.h"
#include "durability_check.h"
#include "ftl_harness.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

constexpr format::MappingScheme kSchemes[] = {format::MappingScheme::cftl, format::MappingScheme::dftl,
                                              format::MappingScheme::page};

// A chip in a memory store that outlives every FTL opened on it: each open gets a fresh
// SimulatedChip, as a restart would, so edits to the store show.
struct Rig {
  Geometry g = small_ftl_geometry();
  std::shared_ptr<PageStore> store = make_memory_store(g);
  SimClock clock;
  std::unique_ptr<SimulatedChip> chip;
  FtlOptions options;

  explicit Rig(format::MappingScheme scheme) : options(small_cache_options(scheme, format::GcPolicy::greedy)) {}

  Result<std::unique_ptr<Ftl>> format() {
    restart();
    return Ftl::format(*chip, clock, options);
  }
  Result<std::unique_ptr<Ftl>> open() {
    restart();
    return Ftl::open(*chip, clock, options);
  }
  void restart() { chip = std::make_unique<SimulatedChip>(store, LatencyProfile::of(LatencyPreset::zero), clock); }

  Ppn page_of(Ftl& ftl, std::uint64_t lpn) {
    auto ppn = ftl.core().ram().lookup(Lpn(lpn), ftl::Access::internal);
    REQUIRE_OK(ppn);
    return Ppn(*ppn);
  }

  // What `lpn` reads: its version, 0 for zeros, or the error.
  Result<std::uint64_t> version(Ftl& ftl, std::uint64_t lpn) {
    std::vector<std::uint8_t> page(g.page_size_bytes);
    FLASHDIR_TRY(ftl.read(Lpn(lpn), 1, page));
    return version_of(lpn, page);
  }

  // Formats and writes LPNs [0, 3P) a block at a time (version 1); returns the FTL and the
  // block holding LPNs [P, 2P), which starts at its first page.
  std::pair<std::unique_ptr<Ftl>, BlockNumber> format_three_blocks() {
    const std::uint32_t P = g.pages_per_block;
    auto ftl = format();
    REQUIRE_OK(ftl);
    for (std::uint64_t first = 0; first < 3 * P; first += P) REQUIRE_OK((*ftl)->write(Lpn(first), P, run_data(g, first, P, 1)));
    const BlockNumber block = g.block_of(page_of(**ftl, P));
    REQUIRE(page_of(**ftl, P) == g.first_page(block));
    return {std::move(ftl).value(), block};
  }

  // Flips one bit of the data of `page` in the medium: every read of it fails verification.
  void damage_data(Ppn page) {
    std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
    REQUIRE_OK(store->read_pages(page, 1, data, oob));
    data[100] ^= 0x10;
    REQUIRE_OK(store->write_pages(page, 1, data, oob));
  }
};

std::vector<std::uint64_t> values(const std::vector<Lpn>& lpns) {
  std::vector<std::uint64_t> out;
  for (Lpn lpn : lpns) out.push_back(lpn.value);
  return out;
}

void require_lost(Rig& rig, Ftl& ftl, std::uint64_t lpn) {
  const auto read = rig.version(ftl, lpn);
  INFO("LPN " << lpn);
  REQUIRE_FALSE(read.is_ok());
  CHECK(read.status().code() == StatusCode::corruption);
  CHECK_THAT(read.status().message(), Catch::Contains(fmt::format("LPN {} is lost", lpn)));
}

}  // namespace

TEST_CASE("a block that vanished after the checkpoint sends recovery to the whole mapping, its LPNs lost",
          "[ftl][lost]") {
  // Recovery moves the checkpoint's block table forward only when it can prove that every page
  // the checkpoint held valid in a block erased since was remapped by a replayed page. A block
  // that the chip lost (its programmed-page count cleared in the block table) breaks that
  // proof: its LPNs must come back lost, as the whole mapping's rebuild finds them.
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  const std::uint32_t P = rig.g.pages_per_block;
  BlockNumber block;
  {
    auto [ftl, written] = rig.format_three_blocks();
    block = written;
    REQUIRE_OK(ftl->close());  // the checkpoint holds the block's P pages valid
  }
  std::uint64_t last = 0;  // in another translation page than the block's LPNs
  {
    auto ftl = rig.open();
    REQUIRE_OK(ftl);
    last = (*ftl)->logical_pages() - 1;
    REQUIRE_OK((*ftl)->write(Lpn(last), 1, run_data(rig.g, last, 1, 2)));  // a change: the next open recovers
    REQUIRE_OK((*ftl)->flush());
  }
  BlockState state = rig.store->block_state(block);
  state.next_page = 0;
  REQUIRE_OK(rig.store->set_block_state(block, state));

  std::vector<std::uint64_t> vanished;
  for (std::uint64_t lpn = P; lpn < 2 * P; ++lpn) vanished.push_back(lpn);
  auto ftl = rig.open();
  REQUIRE_OK(ftl);
  REQUIRE_FALSE((*ftl)->recovery().clean);
  CHECK_FALSE((*ftl)->recovery().moved_forward);
  CHECK(values((*ftl)->lost_lpns()) == vanished);
  for (std::uint64_t lpn : vanished) require_lost(rig, **ftl, lpn);
  CHECK(rig.version(**ftl, last).value() == 2);
  CHECK(rig.version(**ftl, 2 * P).value() == 1);
}

TEST_CASE("recovery after a few writes moves the checkpoint's block table forward", "[ftl]") {
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  const std::uint32_t P = rig.g.pages_per_block;
  REQUIRE_OK(rig.format_three_blocks().first->close());
  {
    auto ftl = rig.open();
    REQUIRE_OK(ftl);
    REQUIRE_OK((*ftl)->write(Lpn(P + 1), 2, run_data(rig.g, P + 1, 2, 2)));  // replaces two pages
    REQUIRE_OK((*ftl)->trim(Lpn(2 * P), 1));
    REQUIRE_OK((*ftl)->flush());  // the trim reaches a translation page
  }
  auto ftl = rig.open();
  REQUIRE_OK(ftl);
  REQUIRE_FALSE((*ftl)->recovery().clean);
  CHECK((*ftl)->recovery().moved_forward);
  CHECK(fsck_errors(*rig.chip, rig.options) == "");
  CHECK(rig.version(**ftl, P).value() == 1);
  CHECK(rig.version(**ftl, P + 1).value() == 2);
  CHECK(rig.version(**ftl, P + 2).value() == 2);
  CHECK(rig.version(**ftl, 2 * P).value() == 0);
  CHECK(rig.version(**ftl, 2 * P + 1).value() == 1);
}

TEST_CASE("LPNs whose pages vanished before recovery read as errors, never zeros", "[ftl][lost]") {
  // Issue 8, item 2: a block's programmed-page count lowered in the block table; open used to
  // succeed with the LPNs of the vanished pages reading as zeros.
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  INFO(format::mapping_scheme_name(scheme));
  Rig rig(scheme);
  const std::uint32_t P = rig.g.pages_per_block;
  BlockNumber block;
  {
    auto [ftl, written] = rig.format_three_blocks();
    block = written;
    REQUIRE_OK(ftl->flush());
    // Dropped without close(): the next open recovers.
  }
  BlockState state = rig.store->block_state(block);
  REQUIRE(state.next_page == P);
  state.next_page = P / 2;
  REQUIRE_OK(rig.store->set_block_state(block, state));

  std::vector<std::uint64_t> vanished;
  for (std::uint64_t lpn = P + P / 2; lpn < 2 * P; ++lpn) vanished.push_back(lpn);
  {
    auto ftl = rig.open();
    REQUIRE_OK(ftl);
    CHECK((*ftl)->recovery().dangling_mappings == P / 2);
    CHECK((*ftl)->recovery().lost_lpns == P / 2);
    CHECK(values((*ftl)->lost_lpns()) == vanished);
    CHECK(values((*ftl)->take_newly_lost_lpns()) == vanished);
    CHECK((*ftl)->take_newly_lost_lpns().empty());
    for (std::uint64_t lpn : vanished) require_lost(rig, **ftl, lpn);
    CHECK(rig.version(**ftl, P + P / 2 - 1).value() == 1);
    std::vector<std::uint8_t> run(std::size_t{P} * rig.g.page_size_bytes);
    CHECK((*ftl)->read(Lpn(P), P, run).code() == StatusCode::corruption);  // in a run too
    REQUIRE_OK((*ftl)->close());
  }
  {
    // A clean restart knows them from the checkpoint.
    auto ftl = rig.open();
    REQUIRE_OK(ftl);
    REQUIRE((*ftl)->recovery().clean);
    CHECK(values((*ftl)->lost_lpns()) == vanished);
    for (std::uint64_t lpn : vanished) require_lost(rig, **ftl, lpn);
    // Written or trimmed, an LPN is no longer lost.
    REQUIRE_OK((*ftl)->write(Lpn(vanished[0]), 1, run_data(rig.g, vanished[0], 1, 7)));
    REQUIRE_OK((*ftl)->trim(Lpn(vanished[1]), 1));
    CHECK(rig.version(**ftl, vanished[0]).value() == 7);
    CHECK(rig.version(**ftl, vanished[1]).value() == 0);
    REQUIRE_OK((*ftl)->flush());
    CHECK((*ftl)->lost_lpns().size() == vanished.size() - 2);
  }
  // After a power cut (no close), recovery agrees.
  auto ftl = rig.open();
  REQUIRE_OK(ftl);
  REQUIRE_FALSE((*ftl)->recovery().clean);
  CHECK((*ftl)->lost_lpns().size() == vanished.size() - 2);
  CHECK(rig.version(**ftl, vanished[0]).value() == 7);
  CHECK(rig.version(**ftl, vanished[1]).value() == 0);
  for (std::size_t i = 2; i < vanished.size(); ++i) require_lost(rig, **ftl, vanished[i]);
}

TEST_CASE("GC loses an unreadable valid page and goes on; the LPN reads as an error until rewritten", "[ftl][lost]") {
  // Issue 8, item 3: one corrupted data page made every later write fail with "GC cannot move
  // valid page N". Damaged data leaves the page's record (so its LPN) readable; a damaged
  // record makes GC find the LPN in the translation pages.
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  const bool damage_record = GENERATE(false, true);
  INFO(format::mapping_scheme_name(scheme) << (damage_record ? ", damaged OOB record" : ", damaged data"));
  Rig rig(scheme);
  const std::uint32_t P = rig.g.pages_per_block;
  constexpr std::uint64_t kLpn = 5;
  std::uint64_t logical = 0;
  {
    auto ftl = rig.format();
    REQUIRE_OK(ftl);
    logical = (*ftl)->logical_pages() / P * P;
    for (std::uint64_t first = 0; first < logical; first += P) {
      REQUIRE_OK((*ftl)->write(Lpn(first), P, run_data(rig.g, first, P, 1)));
    }
    REQUIRE_OK((*ftl)->close());
  }
  {
    auto ftl = rig.open();
    REQUIRE_OK(ftl);
    const Ppn page = rig.page_of(**ftl, kLpn);
    if (damage_record) {
      std::vector<std::uint8_t> data(rig.g.page_size_bytes), oob(rig.g.oob_size_bytes);
      REQUIRE_OK(rig.store->read_pages(page, 1, data, oob));
      oob[20] ^= 0x10;
      REQUIRE_OK(rig.store->write_pages(page, 1, data, oob));
    } else {
      rig.damage_data(page);
    }
  }
  auto ftl = rig.open();
  REQUIRE_OK(ftl);
  std::vector<std::uint64_t> versions(logical, 1);
  SeededRandom random(11);
  std::uint64_t version = 1;
  std::uint64_t writes = 0;
  for (; (*ftl)->lost_lpns().empty() && writes < 40 * logical; ++writes) {
    std::uint64_t lpn = random.uniform(logical);
    if (lpn == kLpn) continue;
    ++version;
    REQUIRE_OK((*ftl)->write(Lpn(lpn), 1, run_data(rig.g, lpn, 1, version)));
    versions[lpn] = version;
  }
  INFO(writes << " writes");
  REQUIRE(values((*ftl)->lost_lpns()) == std::vector<std::uint64_t>{kLpn});
  CHECK(values((*ftl)->take_newly_lost_lpns()) == std::vector<std::uint64_t>{kLpn});
  require_lost(rig, **ftl, kLpn);
  for (std::uint64_t lpn = 0; lpn < logical; ++lpn) {
    if (lpn != kLpn) REQUIRE(rig.version(**ftl, lpn).value() == versions[lpn]);
  }
  // The loss outlives a power cut (the FTL dropped without close) ...
  REQUIRE_OK((*ftl)->flush());
  ftl = rig.open();
  REQUIRE_OK(ftl);
  CHECK(values((*ftl)->lost_lpns()) == std::vector<std::uint64_t>{kLpn});
  require_lost(rig, **ftl, kLpn);
  // ... until the LPN is written again.
  REQUIRE_OK((*ftl)->write(Lpn(kLpn), 1, run_data(rig.g, kLpn, 1, 99)));
  CHECK(rig.version(**ftl, kLpn).value() == 99);
  CHECK((*ftl)->lost_lpns().empty());
  REQUIRE_OK((*ftl)->close());
  ftl = rig.open();
  REQUIRE_OK(ftl);
  CHECK((*ftl)->lost_lpns().empty());
  CHECK(rig.version(**ftl, kLpn).value() == 99);
}
