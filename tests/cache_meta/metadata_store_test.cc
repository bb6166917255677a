// The metadata store (src/cache/meta): layout, the LUFUW window, the usability rule on
// hand-written crash states, each scheme's writes, drops and trims, corrupt metadata pages.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cache/meta/unfinished_window.h"
#include "cache/meta/usability_rule.h"
#include "store_rig.h"

using namespace flashdir;
using namespace flashdir::cache;
using namespace flashdir::testing;
namespace flag = format::metadata_flag;

namespace {

format::MetadataPage chip_page(StoreRig& rig, std::uint32_t page) {
  std::vector<std::uint8_t> bytes(rig.geometry().page_size_bytes);
  REQUIRE_OK(rig.ftl().read(Lpn(page), 1, bytes));
  auto decoded = format::decode_metadata_page(bytes);
  REQUIRE_OK(decoded);
  return std::move(decoded).value();
}

bool usable(const RecoveredSlots& r, SlotIndex slot) {
  return std::any_of(r.usable.begin(), r.usable.end(), [&](const RecoveredSlot& s) { return s.slot == slot; });
}

}  // namespace

TEST_CASE("the slot layout packs metadata pages and slots into the logical space", "[cache-meta]") {
  for (std::uint64_t logical : {2ull, 14ull, 15ull, 700ull, 1'000'003ull}) {
    auto layout = SlotLayout::compute(logical, 512);
    REQUIRE_OK(layout);
    const std::uint64_t E = layout->entries_per_page;
    CHECK(E == 13);
    CHECK(layout->metadata_pages == (layout->slot_count + E - 1) / E);
    CHECK(layout->metadata_pages + layout->slot_count <= logical);
    // One more slot would not fit.
    const std::uint64_t more = layout->slot_count + 1ull;
    CHECK((more + E - 1) / E + more > logical);
    CHECK(layout->data_lpn(0).value == layout->metadata_pages);
  }
  CHECK(SlotLayout::compute(1, 512).status().code() == StatusCode::no_space);
  CHECK(SlotLayout::compute(100, 256).status().code() == StatusCode::invalid_argument);
  auto big = SlotLayout::compute(1 << 20, 4096);
  REQUIRE_OK(big);
  CHECK(big->entries_per_page == 237);
  CHECK(big->entries_in(static_cast<std::uint32_t>(big->metadata_pages - 1)) <= 237);
}

TEST_CASE("an aligned slot layout starts its data slots at a multiple of the alignment", "[cache-meta]") {
  for (const std::uint32_t align : {1u, 8u, 128u}) {
    for (std::uint64_t logical : {200ull, 700ull, 1'000'003ull}) {
      INFO("alignment " << align << ", " << logical << " logical pages");
      auto layout = SlotLayout::compute(logical, 512, align);
      REQUIRE_OK(layout);
      const std::uint64_t E = layout->entries_per_page;
      CHECK(layout->metadata_pages == (layout->slot_count + E - 1) / E);
      CHECK(layout->first_data_lpn % align == 0);
      CHECK(layout->first_data_lpn >= layout->metadata_pages);
      CHECK(layout->first_data_lpn < layout->metadata_pages + align);
      CHECK(layout->data_lpn(0).value == layout->first_data_lpn);
      CHECK(layout->fits(logical));
      CHECK(layout->first_data_lpn + layout->slot_count <= logical);
      // One more slot would not fit: its metadata page or the gap before the slots grows.
      const std::uint64_t more = layout->slot_count + 1ull;
      const std::uint64_t more_start = ((more + E - 1) / E + align - 1) / align * align;
      CHECK(more_start + more > logical);
    }
  }
  // The 128-page alignment of the default chip costs at most 127 slots of a million.
  auto packed = SlotLayout::compute(1'000'003, 512);
  auto aligned = SlotLayout::compute(1'000'003, 512, 128);
  REQUIRE_OK(packed);
  REQUIRE_OK(aligned);
  CHECK(packed->first_data_lpn % 128 != 0);  // else the case above proves nothing
  CHECK(packed->slot_count - aligned->slot_count < 128);
  CHECK(SlotLayout::compute(100, 512, 128).status().code() == StatusCode::no_space);
}

TEST_CASE("the window lets pages leave only from its front", "[cache-meta][window]") {
  meta::UnfinishedWindow window(3);
  window.add(5, 50);
  window.add(7, 70);
  window.add(5, 51);  // page 5 keeps its place
  CHECK(window.pages() == std::vector<std::uint32_t>{5, 7});
  CHECK(window.finish(7, 70).empty());  // finished, but behind the unfinished page 5
  CHECK(window.pages() == std::vector<std::uint32_t>{5, 7});
  window.add(9, 90);
  CHECK(window.needs_room_for(11));
  CHECK_FALSE(window.needs_room_for(9));
  CHECK(window.unfinished_slots(5) == std::vector<std::uint32_t>{50, 51});
  CHECK(window.finish(5, 50).empty());
  CHECK(window.finish(5, 51) == std::vector<std::uint32_t>{5, 7});  // 7 was only waiting for 5
  CHECK(window.pages() == std::vector<std::uint32_t>{9});
  CHECK(window.oldest_page() == 9u);
}

TEST_CASE("the usability rule on hand-written crash states", "[cache-meta][rule]") {
  using V = meta::Verdict;
  const format::MetadataEntry empty{};
  const format::MetadataEntry clean{1, 2, flag::kValid};
  const format::MetadataEntry dirty{1, 2, flag::kValid | flag::kDirty};
  const format::MetadataEntry clean_writing{1, 2, flag::kValid | flag::kWriting};
  const format::MetadataEntry dirty_writing{1, 2, flag::kValid | flag::kDirty | flag::kWriting};

  std::vector<std::optional<format::MetadataPageHeader>> headers(4);
  headers[0] = format::MetadataPageHeader{0, 10, format::MetadataSchemeCode::lufuw, false, {0, 2}};
  headers[2] = format::MetadataPageHeader{2, 12, format::MetadataSchemeCode::lufuw, false, {2}};  // newest
  headers[3] = format::MetadataPageHeader{3, 11, format::MetadataSchemeCode::lufuw, true, {}};
  const meta::ChipSummary chip = meta::summarize(headers);
  CHECK(chip.newest_sequence == 12);
  CHECK(chip.newest_page == 2);
  CHECK_FALSE(chip.clean_shutdown);  // an older page's clean mark does not count
  CHECK(chip.window == std::vector<std::uint32_t>{2});

  const auto lufuw = MetadataScheme::lufuw;
  CHECK(meta::judge(chip, lufuw, 0, empty) == V::empty);
  CHECK(meta::judge(chip, lufuw, 0, clean) == V::usable);
  CHECK(meta::judge(chip, lufuw, 0, clean_writing) == V::usable);  // page 0 left the newest window
  CHECK(meta::judge(chip, lufuw, 2, clean_writing) == V::dropped);
  CHECK(meta::judge(chip, lufuw, 2, dirty_writing) == V::dropped);
  CHECK(meta::judge(chip, lufuw, 2, dirty) == V::usable);

  const auto wu = MetadataScheme::write_update;
  CHECK(meta::judge(chip, wu, 0, clean) == V::dropped);
  CHECK(meta::judge(chip, wu, 0, dirty) == V::usable);
  CHECK(meta::judge(chip, wu, 0, dirty_writing) == V::dropped);

  const auto uwu = MetadataScheme::update_write_update;
  CHECK(meta::judge(chip, uwu, 0, clean) == V::usable);
  CHECK(meta::judge(chip, uwu, 0, clean_writing) == V::dropped);

  meta::ChipSummary lost = chip;
  lost.window_lost = true;
  CHECK(meta::judge(lost, lufuw, 0, clean_writing) == V::dropped);
  meta::ChipSummary marked = chip;
  marked.clean_shutdown = true;
  CHECK(meta::judge(marked, wu, 2, clean) == V::usable);
  CHECK(meta::judge(marked, lufuw, 2, clean_writing) == V::usable);
  CHECK_FALSE(meta::summarize(std::vector<std::optional<format::MetadataPageHeader>>(3)).any_page);
}

TEST_CASE("a clean close keeps every slot of every scheme", "[cache-meta]") {
  const auto scheme = GENERATE(from_range(std::begin(kMetadataSchemes), std::end(kMetadataSchemes)));
  INFO("scheme " << scheme_label(scheme));
  StoreRig rig(scheme);
  REQUIRE_OK(rig.write(0, 20, 7, 100, false, 1));
  REQUIRE_OK(rig.write(30, 3, 8, 0, true, 2));
  const SlotIndex evicted[] = {5};
  REQUIRE_OK(rig.store().drop(evicted, Durability::buffered));
  REQUIRE_OK(rig.close_clean());
  auto recovered = rig.power_cycle();
  REQUIRE_OK(recovered);
  CHECK(recovered->clean_shutdown);
  CHECK(recovered->usable.size() == 22);
  CHECK(recovered->dropped == 0);
  CHECK(recovered->dirty == 3);
  CHECK(recovered->usable_fraction() == 1.0);
  CHECK_FALSE(usable(*recovered, 5));
  CHECK(rig.data_version(5) == 0u);  // the evicted slot was trimmed
  CHECK(rig.data_version(6) == 1u);
  CHECK(rig.store().entry(31) == SlotEntry{8, 1, true});

  SECTION("and a crash after the reopen no longer counts as clean") {
    REQUIRE_OK(rig.write(40, 1, 9, 0, true, 3));
    REQUIRE_OK(rig.ftl().flush());
    rig.store().on_durable(rig.ftl().durable_seq());
    auto again = rig.power_cycle();
    REQUIRE_OK(again);
    CHECK_FALSE(again->clean_shutdown);
    switch (scheme) {
      case MetadataScheme::write_update:
        CHECK(again->usable.size() == 4);  // only the dirty slots
        CHECK(again->dropped == 19);
        CHECK(rig.data_version(0) == 0u);  // dropped and trimmed
        break;
      case MetadataScheme::lufuw:
        // The last write's confirmation had no later write of its page to ride on, and its
        // page is in the newest window: the one slot LUFUW gives up.
        CHECK_FALSE(usable(*again, 40));
        CHECK(again->usable.size() == 22);
        break;
      case MetadataScheme::update_write_update:
        CHECK(usable(*again, 40));
        CHECK(again->usable.size() == 23);
        break;
    }
  }
}

TEST_CASE("lufuw: WRITING reaches the chip first and is cleared in RAM once the data is durable", "[cache-meta][lufuw]") {
  StoreRig rig(MetadataScheme::lufuw, format::RamPolicy::tree, std::nullopt, 64 << 10);  // data stays in RAM
  const auto E = rig.layout().entries_per_page;
  REQUIRE_OK(rig.write(0, 3, 7, 0, false, 1));
  CHECK(rig.store().counters().metadata_writes == 2);  // format's page 0, then one for three entries
  CHECK(rig.store().writing(0));
  const auto page0 = chip_page(rig, 0);
  CHECK(page0.entries[1].writing());
  CHECK(page0.header.window == std::vector<std::uint32_t>{0});

  SECTION("a crash before the data is durable drops the slots") {
    auto recovered = rig.power_cycle();
    REQUIRE_OK(recovered);
    CHECK(recovered->usable.empty());
    CHECK(recovered->dropped == 3);
    CHECK(rig.data_version(0) == 0u);
    CHECK_FALSE(rig.store().entry(0).has_value());
    CHECK(chip_page(rig, 0).entries[0] == format::MetadataEntry{});  // cleared on the chip
  }
  SECTION("once durable, the confirmation rides on a later write and the window shrinks") {
    REQUIRE_OK(rig.ftl().flush());
    rig.store().on_durable(rig.ftl().durable_seq());
    CHECK_FALSE(rig.store().writing(0));
    CHECK(chip_page(rig, 0).entries[0].writing());  // lazily: not written yet
    CHECK(rig.store().window_pages().empty());
    REQUIRE_OK(rig.write(E, 1, 8, 0, false, 2));  // page 1
    CHECK(chip_page(rig, 1).header.window == std::vector<std::uint32_t>{1});
    auto recovered = rig.power_cycle();
    REQUIRE_OK(recovered);
    // Page 0's entries still say WRITING on the chip, but page 0 is not in the newest window.
    CHECK(usable(*recovered, 0));
    CHECK(usable(*recovered, 2));
    CHECK_FALSE(usable(*recovered, E));
    CHECK(rig.data_version(1) == 1u);
    CHECK(recovered->usable_fraction() == Approx(0.75));
  }
  SECTION("a later write of the same page carries the confirmation") {
    REQUIRE_OK(rig.ftl().flush());
    rig.store().on_durable(rig.ftl().durable_seq());
    REQUIRE_OK(rig.write(5, 1, 7, 5, false, 2));
    const auto again = chip_page(rig, 0);
    CHECK_FALSE(again.entries[0].writing());
    CHECK(again.entries[5].writing());
    CHECK(rig.store().counters().entries_written == 7);  // 3 + (3 confirmations + 1)
  }
}

TEST_CASE("lufuw: a full window forces its oldest write to the chip", "[cache-meta][lufuw][window]") {
  StoreRig rig(MetadataScheme::lufuw, format::RamPolicy::static_split, std::nullopt, 256 << 10, 128);
  const auto E = rig.layout().entries_per_page;
  REQUIRE(rig.layout().metadata_pages > 70);
  for (std::uint32_t page = 0; page < 70; ++page) {
    REQUIRE_OK(rig.write(page * E, 1, 1, page, false, page + 1));
    CHECK(rig.store().window_pages().size() <= format::kMetadataWindowCapacity);
  }
  CHECK(rig.store().counters().window_forced >= 7);
  CHECK(rig.ftl().stats().forced_program_pages >= 7);  // their data still sat in the device RAM
  CHECK_FALSE(rig.store().writing(0));
  CHECK(chip_page(rig, 0).entries[0] == format::MetadataEntry{1, 0, flag::kValid});  // confirmed on the chip
  auto recovered = rig.power_cycle();
  REQUIRE_OK(recovered);
  for (std::uint32_t page = 0; page < 7; ++page) CHECK(usable(*recovered, page * E));
  for (const auto& slot : recovered->usable) CHECK(rig.data_version(slot.slot) == slot.entry.page_no + 1);
}

TEST_CASE("lufuw: a batch whose first page is the window's oldest makes room before it registers",
          "[cache-meta][lufuw][window]") {
  // Found by the engine benchmark: random writes filled the window, then a run of slots across
  // two metadata pages began on the oldest one. Registering it there first left no page the
  // window could force for the second.
  StoreRig rig(MetadataScheme::lufuw, format::RamPolicy::static_split, std::nullopt, 256 << 10, 128);
  const auto E = rig.layout().entries_per_page;
  const auto capacity = static_cast<std::uint32_t>(format::kMetadataWindowCapacity);
  REQUIRE(rig.layout().metadata_pages > capacity + 2);
  REQUIRE_OK(rig.write(0, 1, 1, 0, false, 1));  // page 0, oldest
  for (std::uint32_t page = 2; page <= capacity; ++page) REQUIRE_OK(rig.write(page * E, 1, 1, page, false, page));
  REQUIRE(rig.store().window_pages().size() == capacity);
  REQUIRE(rig.store().window_pages().front() == 0);

  REQUIRE_OK(rig.write(E - 1, 2, 2, 0, false, 100));  // the last slot of page 0, the first of page 1
  const auto window = rig.store().window_pages();
  CHECK(window.size() <= capacity);
  CHECK(std::find(window.begin(), window.end(), 0u) != window.end());
  CHECK(std::find(window.begin(), window.end(), 1u) != window.end());
  CHECK(rig.store().counters().window_forced >= 1);
  CHECK_FALSE(rig.store().writing(0));  // page 0's older write was forced to completion
  auto recovered = rig.power_cycle();
  REQUIRE_OK(recovered);
  CHECK(usable(*recovered, 0));
  const auto expected_version = [&](const RecoveredSlot& s) -> std::uint64_t {
    if (s.slot == E - 1 || s.slot == E) return 100;
    return s.slot == 0 ? 1 : s.entry.page_no;  // the first loop wrote version = page number
  };
  for (const auto& slot : recovered->usable) CHECK(rig.data_version(slot.slot) == expected_version(slot));
}

TEST_CASE("metadata writes per data write of each scheme", "[cache-meta]") {
  const auto scheme = GENERATE(from_range(std::begin(kMetadataSchemes), std::end(kMetadataSchemes)));
  INFO("scheme " << scheme_label(scheme));
  StoreRig rig(scheme);
  const std::uint64_t at_format = rig.store().counters().metadata_writes;
  REQUIRE_OK(rig.write(0, 13, 7, 0, false, 1));  // a read-miss fill of one metadata page's slots
  const std::uint64_t fill = rig.store().counters().metadata_writes - at_format;
  REQUIRE_OK(rig.write(20, 1, 8, 0, true, 2));  // a dirty write
  REQUIRE_OK(rig.write(20, 1, 8, 0, true, 3));  // overwritten while dirty
  const std::uint64_t writes = rig.store().counters().metadata_writes - at_format - fill;
  switch (scheme) {
    case MetadataScheme::lufuw:
      CHECK(fill == 1);
      CHECK(writes == 2);
      break;
    case MetadataScheme::write_update:
      CHECK(fill == 1);    // only to clear the fresh cache's clean mark
      CHECK(writes == 1);  // clean -> dirty once
      break;
    case MetadataScheme::update_write_update:
      CHECK(fill == 2);
      CHECK(writes == 4);
      break;
  }
  CHECK(rig.store().counters().data_writes == 15);
  const SlotIndex written_back[] = {20};
  REQUIRE_OK(rig.store().mark_clean(written_back));
  CHECK(rig.store().entry(20) == SlotEntry{8, 0, false});
  CHECK_FALSE(chip_page(rig, 1).entries[20 - 13].dirty());
}

TEST_CASE("write-update: the write that clears the clean mark does not publish a dirty entry before its data",
          "[cache-meta][write-update]") {
  // A cut after the first metadata write of a clean cache and before the dirty write's data is
  // durable (the write-back crash oracle found it: FLASHDIR_TEST_SEED=228 FLASHDIR_TEST_RUN=1).
  StoreRig rig(MetadataScheme::write_update, format::RamPolicy::tree, std::nullopt, 64 << 10);  // data stays in RAM
  const SlotWrite write{0, SlotEntry{7, 3, true}};
  REQUIRE_OK(rig.store().before_data_write(std::span(&write, 1)));
  const auto page0 = chip_page(rig, 0);
  CHECK_FALSE(page0.header.clean_shutdown);  // the mark went before the data
  CHECK_FALSE(page0.entries[0].valid());     // the entry did not
  REQUIRE_OK(rig.ftl().write(rig.layout().data_lpn(0), 1, std::vector<std::uint8_t>(rig.geometry().page_size_bytes, 1)));
  auto recovered = rig.power_cycle();
  REQUIRE_OK(recovered);
  // Trusted, the slot would have been written back from a data page the chip never got.
  CHECK(recovered->usable.empty());
  CHECK(recovered->dirty == 0);
}

TEST_CASE("drops: buffered ones trim once their page is written, forced ones at once", "[cache-meta][drop]") {
  const auto scheme = GENERATE(from_range(std::begin(kMetadataSchemes), std::end(kMetadataSchemes)));
  INFO("scheme " << scheme_label(scheme));
  StoreRig rig(scheme);
  REQUIRE_OK(rig.write(0, 10, 7, 0, false, 1));
  REQUIRE_OK(rig.write(13, 2, 9, 0, false, 1));
  REQUIRE_OK(rig.ftl().flush());
  rig.store().on_durable(rig.ftl().durable_seq());
  const SlotIndex evicted[] = {2, 3};
  REQUIRE_OK(rig.store().drop(evicted, Durability::buffered));
  CHECK_FALSE(rig.store().entry(2).has_value());
  CHECK(rig.data_version(2) == 1u);  // not yet: the chip still names the slot
  const SlotIndex reused[] = {3};
  REQUIRE_OK(rig.write(3, 1, 8, 0, false, 2));  // reuse overtakes the pending trim of slot 3
  // Page 0 written (write-update writes none for a clean fill): slot 2 trimmed.
  CHECK(rig.data_version(2) == (scheme == MetadataScheme::write_update ? 1u : 0u));
  CHECK(rig.data_version(3) == 2u);
  (void)reused;

  const SlotIndex stale[] = {4};
  REQUIRE_OK(rig.store().drop(stale, Durability::forced));
  CHECK(rig.data_version(4) == 0u);
  CHECK(chip_page(rig, 0).entries[4] == format::MetadataEntry{});

  SECTION("invalidating a file also forces its earlier buffered drops") {
    const SlotIndex evict13[] = {13};
    REQUIRE_OK(rig.store().drop(evict13, Durability::buffered));
    const SlotIndex cached14[] = {14};
    REQUIRE_OK(rig.store().invalidate_file(9, cached14));
    CHECK(rig.data_version(13) == 0u);
    CHECK(chip_page(rig, 1).entries[0] == format::MetadataEntry{});
    CHECK(chip_page(rig, 1).entries[1] == format::MetadataEntry{});
  }
  SECTION("bad arguments are refused") {
    const SlotIndex beyond[] = {rig.layout().slot_count};
    CHECK(rig.store().drop(beyond, Durability::forced).code() == StatusCode::invalid_argument);
    CHECK(rig.store().before_data_write(0, {1, std::uint64_t{1} << 50, false}).code() == StatusCode::invalid_argument);
  }
}

TEST_CASE("after a cut a file page the chip names twice is recovered once, from the newer entry", "[cache-meta][drop]") {
  const auto scheme = GENERATE(MetadataScheme::lufuw, MetadataScheme::update_write_update);
  INFO("scheme " << scheme_label(scheme));
  StoreRig rig(scheme);
  const std::uint32_t E = rig.layout().entries_per_page;
  REQUIRE(rig.layout().slot_count > E + 20);
  REQUIRE_OK(rig.write(0, 10, 7, 0, false, 1));
  REQUIRE_OK(rig.write(E + 10, 6, 9, 100, false, 1));
  REQUIRE_OK(rig.ftl().flush());
  rig.store().on_durable(rig.ftl().durable_seq());
  REQUIRE_OK(rig.store().commit());  // pages 0 and 1 leave the window: nothing forces them again
  // The store never leaves two copies of a file page on the chip (a new copy first writes the
  // old one's drop), so the state is made by hand: metadata page 1, written last, also names
  // page 2 of file 7, in slot E + 5, over data of version 2.
  format::MetadataPage page1 = chip_page(rig, 1);
  page1.header.sequence = std::max(chip_page(rig, 0).header.sequence, page1.header.sequence) + 1;
  page1.entries[5] = {7, 2, flag::kValid};
  page1.header.window.clear();  // as the commit left it: every write finished
  std::vector<std::uint8_t> bytes(rig.geometry().page_size_bytes);
  format::encode_metadata_page(page1.header, page1.entries, bytes);
  REQUIRE_OK(rig.ftl().write(Lpn(1), 1, bytes).status());
  const Lpn copy = rig.layout().data_lpn(E + 5);
  REQUIRE_OK(rig.ftl().write(copy, 1, run_data(rig.geometry(), copy.value, 1, 2)).status());
  REQUIRE_OK(rig.ftl().flush());
  SECTION("the store's open drops the older copy") {
    auto recovered = rig.power_cycle();
    REQUIRE_OK(recovered.status());
    CHECK(recovered->duplicates == 1);
    CHECK_FALSE(usable(*recovered, 2));
    CHECK(usable(*recovered, E + 5));
    CHECK(rig.data_version(E + 5) == 2u);
    CHECK(rig.data_version(2) == 0u);  // the older copy is trimmed
    // Nothing else dropped: every page of file 9 and the other nine of file 7.
    CHECK(recovered->usable.size() == 10 + 6);
  }
  SECTION("the caller's search (the engine's restart) finds the older copy, and its drop holds") {
    auto recovered = rig.power_cycle(std::nullopt, cache::MetadataStore::DuplicateSearch::by_caller);
    REQUIRE_OK(recovered.status());
    CHECK(recovered->duplicates == 0);
    REQUIRE(recovered->usable.size() == 10 + 6 + 1);  // both names, until the caller drops one
    const std::vector<std::uint32_t> older = rig.store().find_duplicates(recovered->usable);
    REQUIRE(older.size() == 1);
    CHECK(recovered->usable[older[0]].slot == 2);
    const SlotIndex drop[] = {2};
    REQUIRE_OK(rig.store().drop(drop, Durability::forced));
    auto again = rig.power_cycle(std::nullopt, cache::MetadataStore::DuplicateSearch::by_caller);
    REQUIRE_OK(again.status());
    CHECK(rig.store().find_duplicates(again->usable).empty());
    CHECK_FALSE(usable(*again, 2));
    CHECK(usable(*again, E + 5));
    CHECK(rig.data_version(E + 5) == 2u);
    CHECK(again->usable.size() == 10 + 6);
  }
}

TEST_CASE("corrupt metadata pages drop their slots and nothing else", "[cache-meta][corrupt]") {
  const auto scheme = GENERATE(MetadataScheme::lufuw, MetadataScheme::update_write_update);
  INFO("scheme " << scheme_label(scheme));
  StoreRig rig(scheme);
  const auto E = rig.layout().entries_per_page;
  REQUIRE_OK(rig.write(0, 2 * E + 3, 7, 0, false, 1));
  REQUIRE_OK(rig.close_clean());
  auto reopened = rig.power_cycle();
  REQUIRE_OK(reopened);
  REQUIRE(reopened->usable.size() == 2 * E + 3);

  SECTION("garbage in page 1") {
    std::vector<std::uint8_t> garbage(rig.geometry().page_size_bytes, 0x5A);
    REQUIRE_OK(rig.ftl().write(Lpn(1), 1, garbage, WriteHint::none, Durability::forced));
    auto recovered = rig.power_cycle();
    REQUIRE_OK(recovered);
    CHECK(recovered->damaged_pages == 1);
    CHECK_FALSE(recovered->clean_shutdown);
    CHECK(recovered->usable.size() == E + 3);
    for (SlotIndex s = E; s < 2 * E; ++s) {
      CHECK_FALSE(usable(*recovered, s));
      CHECK(rig.data_version(s) == 0u);  // trimmed
    }
    CHECK(chip_page(rig, 1).entries.size() == E);  // rewritten, empty
    auto again = rig.power_cycle();
    REQUIRE_OK(again);
    CHECK(again->damaged_pages == 0);
    CHECK(again->usable.size() == E + 3);
  }
  SECTION("a valid page at the wrong place") {
    std::vector<std::uint8_t> page0(rig.geometry().page_size_bytes);
    REQUIRE_OK(rig.ftl().read(Lpn(0), 1, page0));
    REQUIRE_OK(rig.ftl().write(Lpn(2), 1, page0, WriteHint::none, Durability::forced));
    auto recovered = rig.power_cycle();
    REQUIRE_OK(recovered);
    CHECK(recovered->damaged_pages == 1);
    CHECK_FALSE(usable(*recovered, 2 * E));
  }
  SECTION("a cache opened with another scheme is refused") {
    auto other = MetadataStore::open(rig.ftl(), rig.layout(), MetadataScheme::write_update);
    CHECK(other.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(other.status().message(), Catch::Contains("scheme code"));
  }
}

TEST_CASE("decode_page refuses a page that decodes but does not belong where it was read", "[cache-meta][corrupt]") {
  auto layout = SlotLayout::compute(700, 512);
  REQUIRE_OK(layout);
  const std::uint32_t E = layout->entries_per_page;
  std::vector<std::uint8_t> bytes(512);
  auto encode = [&](std::uint64_t page_number, std::uint32_t entries, std::vector<std::uint32_t> window) {
    format::MetadataPageHeader header;
    header.page_number = page_number;
    header.sequence = 9;
    header.window = std::move(window);
    std::vector<format::MetadataEntry> slots(entries);
    slots[0] = {4, 2, flag::kValid};
    format::encode_metadata_page(header, slots, bytes);
  };
  encode(0, E, {0, 1});
  auto good = MetadataStore::decode_page(*layout, 0, bytes);
  REQUIRE_OK(good);
  CHECK(good->entries[0].file_id == 4u);

  auto placed = MetadataStore::decode_page(*layout, 1, bytes);
  CHECK(placed.status().code() == StatusCode::corruption);
  CHECK_THAT(placed.status().message(), Catch::Contains("holds the header of page 0"));

  encode(0, E - 1, {});
  auto short_page = MetadataStore::decode_page(*layout, 0, bytes);
  CHECK(short_page.status().code() == StatusCode::corruption);
  CHECK_THAT(short_page.status().message(), Catch::Contains(fmt::format("holds {} entries", E - 1)));

  const auto beyond = static_cast<std::uint32_t>(layout->metadata_pages);
  encode(0, E, {beyond});
  auto window = MetadataStore::decode_page(*layout, 0, bytes);
  CHECK(window.status().code() == StatusCode::corruption);
  CHECK_THAT(window.status().message(), Catch::Contains(fmt::format("window names page {}", beyond)));

  std::fill(bytes.begin(), bytes.end(), 0);
  CHECK(MetadataStore::decode_page(*layout, 0, bytes).status().code() == StatusCode::not_found);
}
