// `stack` (doc/ram.md): TreeFTL's groups with CFTL's compact charge, GC's moves kept as runs
// without reading their page, and data pages evicted least recently used across groups.
#include <catch2/catch.hpp>

#include "ram_rig.h"

using namespace flashdir;
using namespace flashdir::testing;

TEST_CASE("stack evicts the least recently used data page of any group; tree the oldest group's", "[ram][stack]") {
  // Group A (page 0) takes LPN 0, group B (page 1) LPN E + 1, then A takes LPN 1: A is the
  // newest group, LPN 0 the least recently used data page. The budget is two CDPs and the
  // groups' mapping: two CTPs in tree, a few entries in stack.
  for (const auto policy : {format::RamPolicy::tree, format::RamPolicy::stack}) {
    INFO(format::ram_policy_name(policy));
    RamRig rig(policy, policy == format::RamPolicy::tree ? 4 * kPage : 2 * kPage + 64);
    rig.put(0, 1);
    rig.put(E + 1, 2);
    rig.put(1, 3);
    const auto victims = rig.evict();
    if (policy == format::RamPolicy::tree) {
      CHECK(victims == std::vector<std::uint64_t>{E + 1});
    } else {
      CHECK(victims == std::vector<std::uint64_t>{0});
    }
    CHECK(rig.ram->usage().total() <= rig.ram->usage().budget_bytes);
  }
}

TEST_CASE("stack: a read hit makes a data page recent", "[ram][stack]") {
  RamRig rig(format::RamPolicy::stack, 2 * kPage + 64);
  rig.put(0, 1);
  rig.put(E + 1, 2);
  REQUIRE(rig.ram->find(Lpn(0)) != nullptr);  // LPN 0 is now used after E + 1
  rig.put(1, 3);
  CHECK(rig.evict() == std::vector<std::uint64_t>{E + 1});
}

TEST_CASE("stack: a miss caches the run around its LPN; tree the whole page", "[ram][stack]") {
  struct Case {
    format::RamPolicy policy;
    format::MappingScheme mapping;
    std::uint64_t mapping_bytes;
  };
  // Page 2 maps its LPNs to consecutive pages: one run under CFTL, single entries under DFTL.
  for (const Case c : {Case{format::RamPolicy::stack, format::MappingScheme::cftl, 12},
                       Case{format::RamPolicy::stack, format::MappingScheme::dftl, 8},
                       Case{format::RamPolicy::tree, format::MappingScheme::cftl, kPage}}) {
    INFO(format::ram_policy_name(c.policy) << " " << format::mapping_scheme_name(c.mapping));
    RamRig rig(c.policy, 64 * kPage, c.mapping);
    auto& page = rig.pages.pages[2];
    for (std::uint32_t i = 0; i < E; ++i) page.push_back(5000 + i);
    CHECK(rig.ram->lookup(Lpn(2 * E + 7), ftl::Access::read).value() == 5007);
    CHECK(rig.ram->usage().mapping_bytes == c.mapping_bytes);
    // Under CFTL the run covers the page: the next lookup in it is a hit.
    (void)rig.ram->lookup(Lpn(2 * E + 90), ftl::Access::read);
    CHECK(rig.pages.reads == (c.mapping == format::MappingScheme::dftl ? 2 : 1));
  }
}

TEST_CASE("stack: a group takes its whole page at its fifth miss", "[ram][stack]") {
  RamRig rig(format::RamPolicy::stack, 64 * kPage, format::MappingScheme::cftl);
  auto& page = rig.pages.pages[4];
  for (std::uint32_t i = 0; i < E; ++i) page.push_back(9000 + 3 * i);  // no two entries consecutive
  for (std::uint32_t miss = 0; miss < 4; ++miss) {
    CHECK(rig.ram->lookup(Lpn(4 * E + 10 * miss), ftl::Access::read).value() == 9000 + 30 * miss);
  }
  CHECK(rig.pages.reads == 4);
  CHECK(rig.ram->usage().mapping_bytes == 4 * 12);  // four runs of one entry
  CHECK(rig.ram->lookup(Lpn(4 * E + 41), ftl::Access::read).value() == 9000 + 3 * 41);
  CHECK(rig.pages.reads == 5);
  CHECK(rig.ram->usage().mapping_bytes == kPage);  // 128 runs would cost more than the page
  CHECK(rig.ram->lookup(Lpn(4 * E + 100), ftl::Access::read).value() == 9000 + 3 * 100);
  CHECK(rig.pages.reads == 5);
}

TEST_CASE("stack: GC's moves wait as runs without reading their page, and go back in one read-modify-write",
          "[ram][stack][gc]") {
  RamRig rig(format::RamPolicy::stack, 64 * kPage, format::MappingScheme::cftl);
  std::vector<ftl::Relocation> moves;
  for (std::uint32_t i = 0; i < 8; ++i) moves.push_back({Lpn(3 * E + 10 + i), 700 + i});
  REQUIRE(rig.ram->relocate(moves).is_ok());
  CHECK(rig.pages.reads == 0);
  CHECK(rig.ram->usage().mapping_bytes == 12);  // eight consecutive moves: one run
  CHECK(rig.ram->dirty_translation_pages() == 1);
  // GC asking after a moved page needs no read either.
  CHECK(rig.ram->lookup(Lpn(3 * E + 12), ftl::Access::internal).value() == 702);
  CHECK(rig.pages.reads == 0);

  REQUIRE(rig.ram->write_back(3).is_ok());
  CHECK(rig.pages.reads == 1);
  CHECK(rig.pages.writes == 1);
  CHECK(rig.pages.gc_writes == 1);  // only relocations dirtied it
  CHECK(rig.ram->dirty_translation_pages() == 0);
  const auto& written = rig.pages.pages[3];
  CHECK(written[9] == ftl::kUnmappedPpn);
  CHECK(written[10] == 700);
  CHECK(written[17] == 707);
  CHECK(written[18] == ftl::kUnmappedPpn);

  // A host lookup elsewhere in the page loads it whole, the moves on top.
  CHECK(rig.ram->lookup(Lpn(3 * E + 50), ftl::Access::read).value() == ftl::kUnmappedPpn);
  CHECK(rig.ram->lookup(Lpn(3 * E + 11), ftl::Access::read).value() == 701);
  CHECK(rig.pages.reads == 2);
}
