// fsck's FTL check (src/check/ftl_check.h) of valid counts after an unclean shutdown, when the
// checkpoint's counts are out of date: a page the checkpoint counted invalid must not be valid
// in the recovered mapping. The power-cut tests run the same check after every cut and expect
// it to find nothing (ftl_powercut_test.cc, cut_sweep.cc).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "ftl/checkpoint.h"
#include "ftl/layout.h"
#include "ftl/replay.h"
#include "ftl/translation_page.h"
#include "durability_check.h"
#include "ftl_harness.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

constexpr std::uint64_t kLpn = 5;

// The page holding `version` of `lpn`.
Ppn page_of(NandChip& chip, std::uint64_t lpn, std::uint64_t version) {
  const Geometry& g = chip.geometry();
  std::vector<std::uint8_t> oob(g.oob_size_bytes);
  for (std::uint64_t page = 0; page < g.page_count(); ++page) {
    if (!chip.is_programmed(Ppn(page))) continue;
    REQUIRE_OK(chip.read(Ppn(page), 1, {}, oob));
    auto record = format::decode_oob(oob);
    if (record.is_ok() && record->kind == format::PageKind::data && record->logical_number == lpn &&
        record->version == version) {
      return Ppn(page);
    }
  }
  FAIL("no page holds version " << version << " of LPN " << lpn);
  return Ppn(0);
}

// Programs, at the first page of an erased pool block, a translation page that is newer than
// everything on the chip.
void program_translation_page(NandChip& chip, const ftl::FtlLayout& layout, std::uint64_t tpn,
                              std::span<const std::uint32_t> entries, std::uint64_t sequence) {
  const Geometry& g = chip.geometry();
  std::uint64_t block = layout.pool_first_block;
  while (chip.next_page(BlockNumber(block)) != 0) ++block;
  std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
  ftl::encode_translation_page(entries, data);
  format::OobRecord record;
  record.kind = format::PageKind::translation;
  record.logical_number = tpn;
  record.sequence = sequence;
  record.version = sequence;
  record.data_hash = format::xxh3(data);
  format::encode_oob(record, oob);
  REQUIRE_OK(chip.program(g.first_page(BlockNumber(block)), 1, data, oob));
}

}  // namespace

TEST_CASE("fsck: after an unclean shutdown, no page the checkpoint counted invalid is valid again", "[ftl][fsck]") {
  const Geometry g = small_ftl_geometry();
  const FtlOptions options = small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy);
  TestChip chip(Backend::memory, g);
  {
    auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
    REQUIRE_OK(ftl);
    REQUIRE_OK((*ftl)->write(Lpn(0), 16, run_data(g, 0, 16, 1)));  // a whole block
    REQUIRE_OK((*ftl)->write(Lpn(kLpn), 1, run_data(g, kLpn, 1, 2)));
    REQUIRE_OK((*ftl)->close());  // a checkpoint that counts version 1 of LPN 5 invalid
  }
  {
    auto ftl = Ftl::open(chip.chip(), chip.clock(), options);
    REQUIRE_OK(ftl);
    REQUIRE_OK((*ftl)->write(Lpn(100), 9, run_data(g, 100, 9, 3)));
  }  // and the power goes
  INFO("the chip after the power cut");
  REQUIRE(fsck_errors(chip.chip(), options) == "");

  // A translation page written after the checkpoint maps LPN 5 back to version 1, in a block
  // untouched since the checkpoint. Roll-forward and a full scan replay it alike, and the page
  // holds LPN 5: only the valid counts can tell.
  auto layout = ftl::FtlLayout::compute(g, options.overprovision_permille);
  REQUIRE_OK(layout);
  ftl::CheckpointSlots slots(chip.chip(), *layout);
  auto checkpoint = slots.load_newest();
  REQUIRE_OK(checkpoint);
  REQUIRE(checkpoint->marked);
  auto replayed = ftl::replay_mapping(chip.chip(), *layout, &checkpoint->state);
  REQUIRE_OK(replayed);
  const Ppn stale = page_of(chip.chip(), kLpn, 1);
  REQUIRE_FALSE(replayed->scanned[g.block_of(stale).value]);
  const std::uint64_t tpn = layout->tpn_of(Lpn(kLpn));
  std::vector<std::uint32_t> entries(layout->entries_per_translation_page);
  for (std::uint64_t i = 0; i < entries.size(); ++i)
    entries[i] = replayed->map[layout->first_lpn_of_tpn(tpn).value + i];
  entries[kLpn - layout->first_lpn_of_tpn(tpn).value] = static_cast<std::uint32_t>(stale.value);
  program_translation_page(chip.chip(), *layout, tpn, entries,
                           std::max(replayed->highest_sequence, checkpoint->highest_sequence) + 1);

  INFO("the chip with LPN 5 mapped back to its old page " << stale.value);
  const std::string errors = fsck_errors(chip.chip(), options);
  CHECK_THAT(errors, Catch::Contains(fmt::format("block {}: 1 of its", g.block_of(stale).value)) &&
                         Catch::Contains("were invalid at checkpoint"));
  CHECK_THAT(errors, !Catch::Contains("a full scan") && !Catch::Contains("does not hold it"));
}
