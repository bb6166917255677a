// FilePages, the per-file index: against a std::map under random inserts and erases, through
// growth and shrinking, with page numbers read from a side array as the store's entries are.
#include <catch2/catch.hpp>

#include <map>

#include "cache/file_pages.h"
#include "flashdir/random.h"

using flashdir::cache::FilePages;
using flashdir::cache::SlotIndex;

TEST_CASE("FilePages finds every page it holds and no other, through growth, shrinking and erases") {
  constexpr SlotIndex kSlots = 4000;
  std::vector<std::uint64_t> page_of_slot(kSlots, 0);
  const auto page_of = [&](SlotIndex slot) { return page_of_slot[slot]; };
  std::map<std::uint64_t, SlotIndex> model;
  std::vector<SlotIndex> free_slots;
  for (SlotIndex s = 0; s < kSlots; ++s) free_slots.push_back(kSlots - 1 - s);
  FilePages pages;
  flashdir::SeededRandom random(9);
  for (int step = 0; step < 40000; ++step) {
    // Grow for the first half, shrink for the second: every size the table passes through.
    const bool add = free_slots.size() > 0 && (model.empty() || random.uniform(100) < (step < 20000 ? 70U : 30U));
    if (add) {
      // Runs and scattered pages both: sequential page numbers are the common case.
      const std::uint64_t page = random.uniform(2) == 0 ? random.uniform(1ULL << 40) : random.uniform(3000);
      if (model.contains(page)) continue;
      const SlotIndex slot = free_slots.back();
      free_slots.pop_back();
      page_of_slot[slot] = page;
      pages.insert(slot, page_of);
      model[page] = slot;
    } else {
      auto it = model.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(random.uniform(model.size())));
      pages.erase(it->second, page_of);
      free_slots.push_back(it->second);
      model.erase(it);
    }
    REQUIRE(pages.size() == model.size());
    if (step % 997 == 0) {
      for (const auto& [page, slot] : model) REQUIRE(pages.find(page, page_of) == slot);
      std::size_t seen = 0;
      pages.for_each([&](SlotIndex slot) {
        ++seen;
        REQUIRE(model.at(page_of(slot)) == slot);
      });
      REQUIRE(seen == model.size());
      for (int miss = 0; miss < 50; ++miss) {
        const std::uint64_t page = 5000 + random.uniform(1ULL << 40);
        REQUIRE(pages.find(page, page_of).has_value() == model.contains(page));
      }
      // Between 1/4 and 7/8 full once past the smallest sizes: 4 bytes a bucket, 4.6 to 16 a page.
      if (model.size() > 16) {
        CHECK(pages.ram_bytes() * 7 >= model.size() * 4 * 8);
        CHECK(pages.ram_bytes() <= model.size() * 16);
      }
    }
  }
  while (!model.empty()) {
    pages.erase(model.begin()->second, page_of);
    model.erase(model.begin());
  }
  CHECK(pages.empty());
  CHECK(pages.ram_bytes() == 0);
}

TEST_CASE("FilePages hands out the slots a predicate picks, batch after batch, each once per turn") {
  std::vector<std::uint64_t> page_of_slot(100);
  const auto page_of = [&](SlotIndex slot) { return page_of_slot[slot]; };
  FilePages pages;
  for (SlotIndex s = 0; s < 100; ++s) {
    page_of_slot[s] = s * 7;
    pages.insert(s, page_of);
  }
  std::vector<bool> taken(100, false);
  const auto wanted = [](SlotIndex slot) { return slot % 3 == 0; };
  std::size_t total = 0;
  // 34 slots match; the engine asks for at most as many as remain (the file's dirty count).
  for (const std::size_t max : {10, 10, 10, 4}) {
    const auto got = pages.take_from_cursor(max, wanted);
    CHECK(got.size() == max);
    for (SlotIndex slot : got) {
      CHECK(wanted(slot));
      CHECK_FALSE(taken[slot]);
      taken[slot] = true;
    }
    total += got.size();
  }
  CHECK(total == 34);
}

TEST_CASE("FilePages::reserve makes room for that many pages at once: inserting them never grows the table") {
  constexpr SlotIndex kSlots = 5000;
  std::vector<std::uint64_t> page_of_slot(kSlots);
  for (SlotIndex s = 0; s < kSlots; ++s) page_of_slot[s] = 7 * std::uint64_t{s};
  const auto page_of = [&](SlotIndex slot) { return page_of_slot[slot]; };
  FilePages pages;
  pages.insert(0, page_of);
  pages.reserve(kSlots, page_of);
  const std::size_t reserved = pages.ram_bytes();
  CHECK(reserved >= std::size_t{kSlots} * sizeof(SlotIndex) * 8 / 7);
  for (SlotIndex s = 1; s < kSlots; ++s) pages.insert(s, page_of);
  CHECK(pages.ram_bytes() == reserved);
  CHECK(pages.size() == kSlots);
  for (SlotIndex s = 0; s < kSlots; ++s) CHECK(pages.find(7 * std::uint64_t{s}, page_of) == s);
  CHECK_FALSE(pages.find(3, page_of).has_value());
  // A smaller reservation than the table leaves it as it is.
  pages.reserve(10, page_of);
  CHECK(pages.ram_bytes() == reserved);
}

TEST_CASE("FilePages::add_unique fills a reserved table that then finds, erases and inserts like any other") {
  constexpr SlotIndex kSlots = 6000;
  std::vector<std::uint64_t> page_of_slot(kSlots);
  flashdir::SeededRandom random(21);
  std::map<std::uint64_t, SlotIndex> model;
  for (SlotIndex s = 0; s < kSlots; ++s) {
    std::uint64_t page = s < kSlots / 2 ? s : random.uniform(1ULL << 40);
    while (model.contains(page)) page = random.uniform(1ULL << 40);
    page_of_slot[s] = page;
    model[page] = s;
  }
  const auto page_of = [&](SlotIndex slot) { return page_of_slot[slot]; };
  FilePages pages;
  pages.reserve(kSlots, page_of);
  const std::size_t reserved = pages.ram_bytes();
  for (SlotIndex s = 0; s < kSlots; ++s) pages.add_unique(s, page_of_slot[s]);
  CHECK(pages.ram_bytes() == reserved);
  CHECK(pages.size() == kSlots);
  for (const auto& [page, slot] : model) REQUIRE(pages.find(page, page_of) == slot);
  CHECK_FALSE(pages.find(1ULL << 41, page_of).has_value());
  for (SlotIndex s = 0; s < kSlots; s += 2) {
    pages.erase(s, page_of);
    model.erase(page_of_slot[s]);
  }
  for (SlotIndex s = 0; s < kSlots; s += 4) {
    page_of_slot[s] = (1ULL << 42) + s;
    pages.insert(s, page_of);
    model[page_of_slot[s]] = s;
  }
  CHECK(pages.size() == model.size());
  for (const auto& [page, slot] : model) REQUIRE(pages.find(page, page_of) == slot);
  for (SlotIndex s = 2; s < kSlots; s += 4) CHECK_FALSE(pages.find(page_of_slot[s], page_of).has_value());
}

TEST_CASE("FilePages::retain keeps exactly the slots picked, which it then finds, erases and inserts like any other") {
  constexpr SlotIndex kSlots = 6000;
  std::vector<std::uint64_t> page_of_slot(kSlots, 0);
  const auto page_of = [&](SlotIndex slot) { return page_of_slot[slot]; };
  flashdir::SeededRandom random(17);
  for (const unsigned keep_percent : {0U, 3U, 50U, 97U, 100U}) {
    FilePages pages;
    std::map<std::uint64_t, SlotIndex> model;
    for (SlotIndex slot = 0; slot < 4000; ++slot) {  // a run of pages, as a sequential write leaves
      page_of_slot[slot] = 1000 + slot;
      pages.insert(slot, page_of);
    }
    std::vector<bool> keep(kSlots, false);
    for (SlotIndex slot = 0; slot < 4000; ++slot) {
      keep[slot] = random.uniform(100) < keep_percent;
      if (keep[slot]) model[page_of_slot[slot]] = slot;
    }
    // Dropped slots' pages are gone from the side array: retain must not ask for them.
    for (SlotIndex slot = 0; slot < 4000; ++slot)
      if (!keep[slot]) page_of_slot[slot] = UINT64_MAX;
    pages.retain([&](SlotIndex slot) { return keep[slot]; }, page_of);
    REQUIRE(pages.size() == model.size());
    for (const auto& [page, slot] : model) REQUIRE(pages.find(page, page_of) == slot);
    for (std::uint64_t page = 1000; page < 5000; ++page)
      REQUIRE(pages.find(page, page_of).has_value() == model.contains(page));
    if (model.size() > 16) CHECK(pages.ram_bytes() <= model.size() * 8);
    // Still a working table: erase half of what it kept, add new pages.
    std::size_t n = 0;
    for (auto it = model.begin(); it != model.end();) {
      if (n++ % 2 == 0) {
        pages.erase(it->second, page_of);
        it = model.erase(it);
      } else {
        ++it;
      }
    }
    for (SlotIndex slot = 4000; slot < 4100; ++slot) {
      page_of_slot[slot] = 9000 + slot;
      pages.insert(slot, page_of);
      model[page_of_slot[slot]] = slot;
    }
    REQUIRE(pages.size() == model.size());
    for (const auto& [page, slot] : model) REQUIRE(pages.find(page, page_of) == slot);
  }
}
