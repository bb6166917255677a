// A caching group's translation state (src/ftl/ram/group_map.h): what a whole page is charged
// in each form, the runs count kept exact, and runs set without the page.
#include <catch2/catch.hpp>

#include <vector>

#include "flashdir/random.h"
#include "ftl/mapcache/entry_cache.h"
#include "ftl/ram/group_map.h"

using namespace flashdir;
using flashdir::ram::GroupMap;
using flashdir::ram::GroupMapShape;

namespace {

constexpr std::uint32_t kEntries = 128;

GroupMapShape shape(bool compact, bool consecutive) {
  GroupMapShape s;
  s.entries = kEntries;
  s.page_bytes = 512;
  s.entry_bytes = consecutive ? 12 : 8;
  s.consecutive = consecutive;
  s.compact = compact;
  return s;
}

// A page mapped sequentially: entry i -> 1000 + i.
std::vector<std::uint32_t> sequential_page() {
  std::vector<std::uint32_t> page(kEntries);
  for (std::uint32_t i = 0; i < kEntries; ++i) page[i] = 1000 + i;
  return page;
}

}  // namespace

TEST_CASE("group map: a whole page costs a page in tree, its runs in stack when they cost less", "[ram][stack]") {
  const auto page = sequential_page();
  const GroupMapShape tree = shape(false, true);
  const GroupMapShape stack = shape(true, true);
  const GroupMapShape stack_dftl = shape(true, false);
  GroupMap in_tree(tree), in_stack(stack), in_stack_dftl(stack_dftl);
  for (GroupMap* map : {&in_tree, &in_stack, &in_stack_dftl}) map->load_whole(page);
  CHECK(in_tree.bytes() == 512);
  CHECK(in_stack.bytes() == 12);          // one run
  CHECK(in_stack_dftl.bytes() == 512);    // 128 single entries of 8 bytes cost more than the page
  in_stack.set(40, 7);                    // splits the run in three
  CHECK(in_stack.bytes() == 3 * 12);
  in_stack.set(40, 1040);                 // and joins it again
  CHECK(in_stack.bytes() == 12);
  CHECK(in_stack.find(41) == std::optional<std::uint32_t>(1041));
}

TEST_CASE("group map: the runs count of a whole page stays exact through any sets", "[ram][stack]") {
  const GroupMapShape stack = shape(true, true);
  GroupMap map(stack);
  map.load_whole(sequential_page());
  std::vector<std::uint32_t> model = sequential_page();
  SeededRandom random(21);
  for (int i = 0; i < 5000; ++i) {
    const auto offset = static_cast<std::uint32_t>(random.uniform(kEntries));
    // Values near their neighbours' make runs form and break; marks too.
    std::uint32_t ppn = 0;
    switch (random.uniform(4)) {
      case 0: ppn = offset > 0 ? ftl::run_entry(model[offset - 1], 1) : 1000; break;
      case 1: ppn = ftl::kUnmappedPpn; break;
      case 2: ppn = ftl::kLostPpn; break;
      default: ppn = static_cast<std::uint32_t>(random.uniform(3000)); break;
    }
    map.set(offset, ppn);
    model[offset] = ppn;
    const std::uint64_t expected = std::min<std::uint64_t>(512, map.runs_of(model) * 12);
    INFO("step " << i);
    REQUIRE(map.bytes() == expected);
  }
  std::vector<std::uint32_t> out(kEntries);
  map.overlay(out);
  CHECK(out == model);
}

TEST_CASE("group map: runs set without the page overlay it when it is loaded or written back", "[ram][stack]") {
  const GroupMapShape stack = shape(true, true);
  GroupMap map(stack);
  // GC moves LPNs 10..13 to consecutive pages, and 20 elsewhere: two runs, no page read.
  for (std::uint32_t i = 0; i < 4; ++i) map.set(10 + i, 500 + i);
  map.set(20, 9);
  CHECK(map.bytes() == 2 * 12);
  CHECK(map.find(12) == std::optional<std::uint32_t>(502));
  CHECK_FALSE(map.find(14).has_value());
  map.set(11, 77);  // splits the first run: 10, 11, 12..13
  CHECK(map.bytes() == 4 * 12);
  CHECK(map.find(13) == std::optional<std::uint32_t>(503));

  // Written back: only the runs go over the page on flash.
  std::vector<std::uint32_t> on_flash = sequential_page();
  map.overlay(on_flash);
  CHECK(on_flash[9] == 1009);
  CHECK(on_flash[10] == 500);
  CHECK(on_flash[11] == 77);
  CHECK(on_flash[13] == 503);
  CHECK(on_flash[20] == 9);
  CHECK(on_flash[21] == 1021);

  // Loaded whole: the runs stay on top of what flash holds.
  map.load_whole(sequential_page());
  CHECK(map.whole());
  CHECK(map.find(11) == std::optional<std::uint32_t>(77));
  CHECK(map.find(21) == std::optional<std::uint32_t>(1021));
  std::vector<std::uint32_t> whole(kEntries);
  map.overlay(whole);
  CHECK(whole == on_flash);
}

TEST_CASE("group map: a miss takes the run around its entry, cut short where held runs begin", "[ram][stack]") {
  const GroupMapShape stack = shape(true, true);
  GroupMap map(stack);
  // Runs on flash: [0, 20), [20], [21, 50), [50], [51, 128).
  std::vector<std::uint32_t> page = sequential_page();
  page[20] = 7;
  page[50] = 8;
  map.load_run(page, 30);
  CHECK(map.bytes() == 12);
  CHECK(map.find(21) == std::optional<std::uint32_t>(1021));
  CHECK(map.find(49) == std::optional<std::uint32_t>(1049));
  CHECK_FALSE(map.find(20).has_value());
  CHECK_FALSE(map.find(50).has_value());

  map.set(60, 5);          // GC moved LPN 60: a run held apart from the page
  map.load_run(page, 70);  // [51, 128) on flash, cut after the held 60
  CHECK(map.find(61) == std::optional<std::uint32_t>(1061));
  CHECK(map.find(60) == std::optional<std::uint32_t>(5));
  CHECK_FALSE(map.find(55).has_value());
  map.load_run(page, 55);  // and [51, 60) before it
  CHECK(map.find(51) == std::optional<std::uint32_t>(1051));
  CHECK(map.find(59) == std::optional<std::uint32_t>(1059));
  CHECK(map.bytes() == 4 * 12);

  // Written back, only the moved entry differs from flash.
  std::vector<std::uint32_t> written = page;
  map.overlay(written);
  page[60] = 5;
  CHECK(written == page);
}
