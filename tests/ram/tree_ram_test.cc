// TreeFTL: LATTE's victim order (the paper's Figure 3), the structural invariant, the
// sequential bypass and the budget.
#include <catch2/catch.hpp>

#include "ram_rig.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

constexpr std::uint64_t kPage = 512;
constexpr std::uint64_t E = 128;  // entries per translation page of the rig

}  // namespace

TEST_CASE("tree: LATTE evicts the oldest group's CDPs by offset, the last accessed last, then its CTP",
          "[ram][tree]") {
  // Figure 3: CG_a holds CDPs at offsets 0, 1 and 3, offset 1 accessed last; CG_b is newer.
  // Budget: two CTPs and three CDPs, so every further page costs one eviction.
  RamRig rig(format::RamPolicy::tree, 5 * kPage);
  rig.put(3, 1);
  rig.put(0, 2);
  rig.put(1, 3);  // the last CDP of CG_a accessed
  REQUIRE(rig.evict().empty());
  rig.put(E + 5, 4);  // CG_b: its CTP and a CDP push the RAM over budget
  CHECK(rig.evict() == std::vector<std::uint64_t>{0});  // one CDP of CG_a, the smallest offset
  rig.put(E + 6, 5);
  CHECK(rig.evict() == std::vector<std::uint64_t>{3});  // offset 1 is skipped while others remain
  rig.put(E + 7, 6);
  CHECK(rig.evict() == std::vector<std::uint64_t>{1});  // the last CDP of CG_a
  CHECK(rig.stats.evicted_translation_pages == 0);      // CTP_a waited for its CDPs' mapping updates
  rig.put(E + 8, 7);
  CHECK(rig.evict().empty());  // now CG_a, still the oldest and without CDPs, loses its CTP
  CHECK(rig.stats.evicted_translation_pages == 1);
  CHECK(rig.pages.written == std::vector<std::uint64_t>{0});  // dirty: written back
  CHECK(rig.pages.pages[0][3] == 1003);
  CHECK(rig.ram->usage().total() <= rig.ram->usage().budget_bytes);
}

TEST_CASE("tree: a host access makes a group recent, a flush does not", "[ram][tree]") {
  RamRig rig(format::RamPolicy::tree, 4 * kPage);
  rig.put(1, 1);          // CG 0
  rig.put(E + 1, 2);      // CG 1, now the newest
  (void)rig.ram->lookup(Lpn(2), ftl::Access::read);  // CG 0 becomes the newest
  rig.put(2 * E + 1, 3);  // CG 2: over budget by one CTP and one CDP
  const auto victims = rig.evict();
  CHECK(victims == std::vector<std::uint64_t>{E + 1});  // CG 1 was the oldest
}

TEST_CASE("tree: no cached data page without its translation page", "[ram][tree]") {
  RamRig rig(format::RamPolicy::tree, 6 * kPage);
  for (std::uint64_t i = 0; i < 40; ++i) {
    rig.put((i * 37) % (5 * E), i + 1);
    rig.settle();
    // Every buffered page is found with its CTP: a lookup needs no translation read.
    const std::uint64_t reads = rig.pages.reads;
    for (std::uint64_t lpn = 0; lpn < 5 * E; ++lpn) {
      if (rig.ram->find(Lpn(lpn)) == nullptr) continue;
      (void)rig.ram->lookup(Lpn(lpn), ftl::Access::internal);
      INFO("LPN " << lpn);
      REQUIRE(rig.pages.reads == reads);
    }
    REQUIRE(rig.ram->usage().total() <= rig.ram->usage().budget_bytes);
  }
}

TEST_CASE("tree: writes longer than half a block bypass RAM", "[ram][tree]") {
  RamRig rig(format::RamPolicy::tree, 64 * kPage);
  const std::uint32_t half = rig.layout.geometry.pages_per_block / 2;
  CHECK(rig.ram->buffers_write(half));
  CHECK_FALSE(rig.ram->buffers_write(half + 1));
  RamRig tiny(format::RamPolicy::tree, kPage);  // no room for a CTP and a CDP
  CHECK_FALSE(tiny.ram->buffers_write(1));
}

TEST_CASE("tree: a replaced buffered page keeps the oldest pending write", "[ram][tree]") {
  RamRig rig(format::RamPolicy::tree, 16 * kPage);
  CHECK_FALSE(rig.put(7, 10).has_value());
  CHECK(rig.put(7, 11) == std::optional<std::uint64_t>(10));
  CHECK(rig.put(7, 12) == std::optional<std::uint64_t>(10));
  CHECK(rig.ram->find(Lpn(7))->version == 12);
  CHECK(rig.ram->drop(Lpn(7)) == std::optional<std::uint64_t>(10));
  CHECK(rig.ram->find(Lpn(7)) == nullptr);
}
