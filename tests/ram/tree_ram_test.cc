// TreeFTL: LATTE's victim order (the paper's Figure 3), the structural invariant, the
// sequential bypass and the budget.
#include <catch2/catch.hpp>

#include "ram_rig.h"

using namespace flashdir;
using namespace flashdir::testing;

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

TEST_CASE("tree and stack: no cached data page without its mapping", "[ram][tree][stack]") {
  const auto policy = GENERATE(format::RamPolicy::tree, format::RamPolicy::stack);
  INFO(format::ram_policy_name(policy));
  RamRig rig(policy, 6 * kPage);
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

// ---- GC's mapping updates (doc/ram.md, "GC's mapping updates")

namespace {

std::vector<ftl::Relocation> moves_into(std::uint64_t tpn, std::initializer_list<std::uint32_t> offsets,
                                        std::uint32_t ppn_base) {
  std::vector<ftl::Relocation> moves;
  for (std::uint32_t offset : offsets) moves.push_back({Lpn(tpn * E + offset), ppn_base + offset});
  return moves;
}

}  // namespace

TEST_CASE("tree without the relocation log (the default): a GC move loads its translation page at once",
          "[ram][tree][gc]") {
  RamRig rig(format::RamPolicy::tree, 64 * kPage);
  REQUIRE(rig.ram->relocate(moves_into(3, {1, 5}, 500)).is_ok());
  REQUIRE(rig.ram->relocate(moves_into(5, {2}, 600)).is_ok());
  CHECK(rig.pages.reads == 2);  // pages 3 and 5, each once
  CHECK(rig.ram->dirty_translation_pages() == 2);
  CHECK(rig.ram->lookup(Lpn(3 * E + 5), ftl::Access::internal).value() == 505);
  CHECK(rig.pages.reads == 2);
}

TEST_CASE("tree: GC's moves into uncached translation pages cost one read-modify-write per page, across GC runs",
          "[ram][tree][gc]") {
  RamRig rig(format::RamPolicy::tree, 64 * kPage, format::MappingScheme::dftl, true);  // the log's share: 4 KiB, 512 entries
  // A GC run moves three pages of translation page 3 and one of page 5, none of them cached:
  // before, each page was read at once and written back when the request settled.
  REQUIRE(rig.ram->relocate(moves_into(3, {1, 5}, 500)).is_ok());
  REQUIRE(rig.ram->relocate(moves_into(5, {2}, 600)).is_ok());
  rig.settle();
  CHECK(rig.pages.reads == 0);
  CHECK(rig.pages.writes == 0);
  CHECK(rig.ram->dirty_translation_pages() == 2);
  // GC asking after a page it moved needs no translation read.
  CHECK(rig.ram->lookup(Lpn(3 * E + 5), ftl::Access::internal).value() == 505);
  CHECK(rig.pages.reads == 0);
  // A second GC run, another request: its move into page 3 joins the first run's.
  REQUIRE(rig.ram->relocate(moves_into(3, {7}, 500)).is_ok());
  rig.settle();
  CHECK(rig.pages.writes == 0);
  // Written back (a flush): one read and one write per page, all charged to GC.
  REQUIRE(rig.ram->write_back_all().is_ok());
  CHECK(rig.pages.reads == 2);
  CHECK(rig.pages.writes == 2);
  CHECK(rig.pages.gc_reads == 2);
  CHECK(rig.pages.gc_writes == 2);
  CHECK(rig.pages.pages[3][1] == 501);
  CHECK(rig.pages.pages[3][5] == 505);
  CHECK(rig.pages.pages[3][7] == 507);
  CHECK(rig.pages.pages[3][0] == ftl::kUnmappedPpn);
  CHECK(rig.pages.pages[5][2] == 602);
  CHECK(rig.ram->dirty_translation_pages() == 0);
}

TEST_CASE("tree: a translation page loaded for the host carries GC's waiting moves", "[ram][tree][gc]") {
  RamRig rig(format::RamPolicy::tree, 64 * kPage, format::MappingScheme::dftl, true);
  REQUIRE(rig.ram->relocate(moves_into(4, {9, 10}, 700)).is_ok());
  // The host reads a moved page: its translation page is loaded (a host miss) with the moves.
  CHECK(rig.ram->lookup(Lpn(4 * E + 9), ftl::Access::read).value() == 709);
  CHECK(rig.pages.reads == 1);
  CHECK(rig.pages.gc_reads == 0);
  CHECK(rig.ram->dirty_translation_pages() == 1);
  // Later moves into the now cached page update it in place.
  REQUIRE(rig.ram->relocate(moves_into(4, {11}, 700)).is_ok());
  CHECK(rig.ram->lookup(Lpn(4 * E + 11), ftl::Access::internal).value() == 711);
  CHECK(rig.pages.reads == 1);
  // Only GC dirtied it: its write-back is GC's. After a host write it is the host's.
  REQUIRE(rig.ram->write_back(4).is_ok());
  CHECK(rig.pages.gc_writes == 1);
  CHECK(rig.pages.pages[4][10] == 710);
  (void)rig.ram->lookup(Lpn(4 * E + 12), ftl::Access::write);
  rig.ram->set(Lpn(4 * E + 12), 900);
  REQUIRE(rig.ram->write_back(4).is_ok());
  CHECK(rig.pages.writes == 2);
  CHECK(rig.pages.gc_writes == 1);
}

TEST_CASE("tree: GC moving a translation page takes the moves waiting for it", "[ram][tree][gc]") {
  RamRig rig(format::RamPolicy::tree, 64 * kPage, format::MappingScheme::dftl, true);
  REQUIRE(rig.ram->relocate(moves_into(6, {3}, 800)).is_ok());
  std::vector<std::uint32_t> entries(E, 42);  // the page as on flash
  rig.ram->merge_dirty(6, entries);
  CHECK(entries[3] == 803);
  CHECK(entries[4] == 42);
  CHECK(rig.ram->dirty_translation_pages() == 0);
  REQUIRE(rig.ram->write_back_all().is_ok());
  CHECK(rig.pages.writes == 0);  // nothing left waiting
}

TEST_CASE("tree: the log beyond its share writes back the page with the most waiting moves first",
          "[ram][tree][gc]") {
  RamRig rig(format::RamPolicy::tree, 64 * kPage, format::MappingScheme::dftl, true);  // 512 entries
  const std::pair<std::uint64_t, std::uint32_t> pages[] = {{1, 100}, {2, 120}, {3, 100}, {4, 100}, {5, 95}};
  for (const auto& [tpn, count] : pages) {
    std::vector<ftl::Relocation> moves;
    for (std::uint32_t i = 0; i < count; ++i) moves.push_back({Lpn(tpn * E + i), static_cast<std::uint32_t>(tpn * 1000 + i)});
    REQUIRE(rig.ram->relocate(moves).is_ok());
  }
  rig.settle();  // 515 entries: one page goes, the one with 120
  CHECK(rig.pages.written == std::vector<std::uint64_t>{2});
  CHECK(rig.pages.pages[2][119] == 2119);
  CHECK(rig.ram->usage().total() <= rig.ram->usage().budget_bytes);
}
