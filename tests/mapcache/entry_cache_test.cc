// EntryCache (DFTL's CMT, CFTL's CPMT): runs, splits, eviction order, dirty tracking, budget.
#include <catch2/catch.hpp>

#include <vector>

#include "cache_test_util.h"

using namespace flashdir;
using namespace flashdir::ftl;
using namespace flashdir::testing;

using Runs = std::vector<CachedRun>;

TEST_CASE("the paper's example: a write inside run (100, 200, 10) splits it in three") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  REQUIRE(cache.lookup(Lpn(105)) == 205u);
  cache.set(Lpn(105), 500);
  CHECK(cache.entries() == Runs{run(100, 200, 5), run(105, 500, 1, true), run(106, 206, 4)});
  CHECK(cache.entry_count() == 3);
  CHECK(cache.dirty_count() == 1);
  CHECK(cache.peek(Lpn(104)) == 204u);
  CHECK(cache.peek(Lpn(105)) == 500u);
  CHECK(cache.peek(Lpn(106)) == 206u);
  CHECK(cache.peek(Lpn(109)) == 209u);
}

TEST_CASE("the paper's example: a write at the run's last LPN splits it in two") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  cache.set(Lpn(109), 500);
  CHECK(cache.entries() == Runs{run(100, 200, 9), run(109, 500, 1, true)});
}

TEST_CASE("a write at the run's first LPN leaves a right part only") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  cache.set(Lpn(100), 500);
  CHECK(cache.entries() == Runs{run(100, 500, 1, true), run(101, 201, 9)});
}

TEST_CASE("a write to a run of length 1 replaces its mapping") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 1);
  cache.set(Lpn(100), 500);
  CHECK(cache.entries() == Runs{run(100, 500, 1, true)});
  cache.set(Lpn(100), 501);
  CHECK(cache.entries() == Runs{run(100, 501, 1, true)});
  CHECK(cache.dirty_count() == 1);
}

TEST_CASE("LPNs just outside a run miss") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  CHECK_FALSE(cache.lookup(Lpn(99)).has_value());
  CHECK_FALSE(cache.lookup(Lpn(110)).has_value());
  CHECK_FALSE(cache.peek(Lpn(0)).has_value());
  SECTION("a write just past the run adds an entry and leaves the run whole") {
    cache.set(Lpn(110), 500);
    CHECK(cache.entries() == Runs{run(100, 200, 10), run(110, 500, 1, true)});
  }
  SECTION("a write just before the run adds an entry and leaves the run whole") {
    cache.set(Lpn(99), 500);
    CHECK(cache.entries() == Runs{run(99, 500, 1, true), run(100, 200, 10)});
  }
}

TEST_CASE("every LPN of a run hits with its offset") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  cache.insert_clean(Lpn(110), 900, 3);
  for (std::uint64_t i = 0; i < 10; ++i) {
    INFO("lpn " << 100 + i);
    CHECK(cache.lookup(Lpn(100 + i)) == 200 + i);
  }
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(cache.lookup(Lpn(110 + i)) == 900 + i);
  CHECK_FALSE(cache.lookup(Lpn(113)).has_value());
}

TEST_CASE("insert_clean stops before an LPN that is already cached") {
  EntryCache cache(cftl_options());
  cache.set(Lpn(105), 500);
  cache.insert_clean(Lpn(100), 200, 10);
  CHECK(cache.entries() == Runs{run(100, 200, 5), run(105, 500, 1, true)});
  CHECK_FALSE(cache.peek(Lpn(106)).has_value());
  SECTION("a run that ends before the cached LPN is kept whole") {
    cache.insert_clean(Lpn(106), 206, 4);
    CHECK(cache.entries() == Runs{run(100, 200, 5), run(105, 500, 1, true), run(106, 206, 4)});
  }
  SECTION("a run that would reach the next one is cut at its start") {
    cache.insert_clean(Lpn(110), 300, 5);
    cache.insert_clean(Lpn(106), 206, 8);
    CHECK(cache.entries() == Runs{run(100, 200, 5), run(105, 500, 1, true), run(106, 206, 4),
                                  run(110, 300, 5)});
  }
}

TEST_CASE("without the consecutive field every entry maps one page") {
  EntryCache cache(dftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  CHECK(cache.entries() == Runs{run(100, 200, 1)});
  CHECK_FALSE(cache.peek(Lpn(101)).has_value());
  cache.set(Lpn(100), 500);
  CHECK(cache.entries() == Runs{run(100, 500, 1, true)});
}

TEST_CASE("an unmapped run is unmapped at every offset") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), kUnmappedPpn, 10);
  CHECK(cache.lookup(Lpn(100)) == kUnmappedPpn);
  CHECK(cache.lookup(Lpn(109)) == kUnmappedPpn);
  cache.set(Lpn(105), 500);
  CHECK(cache.entries() ==
        Runs{run(100, kUnmappedPpn, 5), run(105, 500, 1, true), run(106, kUnmappedPpn, 4)});
  CHECK(cache.peek(Lpn(107)) == kUnmappedPpn);
  SECTION("a trim records an unmapped page as a dirty entry") {
    cache.set(Lpn(105), kUnmappedPpn);
    CHECK(cache.peek(Lpn(105)) == kUnmappedPpn);
    CHECK(cache.dirty_count() == 1);
  }
}

TEST_CASE("a sequential write extends the dirty run it continues") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  for (std::uint32_t i = 0; i < 4; ++i) cache.set(Lpn(102 + i), 500 + i);
  CHECK(cache.entries() == Runs{run(100, 200, 2), run(102, 500, 4, true), run(106, 206, 4)});
  SECTION("up to the run's last page, which merges into it") {
    for (std::uint32_t i = 4; i < 8; ++i) cache.set(Lpn(102 + i), 500 + i);
    CHECK(cache.entries() == Runs{run(100, 200, 2), run(102, 500, 8, true)});
    CHECK(cache.take_dirty(Lpn(0), Lpn(1024)) == Runs{run(102, 500, 8)});
  }
  SECTION("a page that does not continue it starts a new entry") {
    cache.set(Lpn(106), 900);
    CHECK(cache.entries() == Runs{run(100, 200, 2), run(102, 500, 4, true), run(106, 900, 1, true), run(107, 207, 3)});
  }
  SECTION("a clean run is never extended") {
    cache.take_dirty(Lpn(0), Lpn(1024));
    cache.set(Lpn(106), 504);
    CHECK(cache.entries() == Runs{run(100, 200, 2), run(102, 500, 4), run(106, 504, 1, true), run(107, 207, 3)});
  }
}

TEST_CASE("a run never crosses a translation page") {
  EntryCache cache(cftl_options());
  cache.set(Lpn(1022), 500);
  cache.set(Lpn(1023), 501);
  cache.set(Lpn(1024), 502);
  CHECK(cache.entries() == Runs{run(1022, 500, 2, true), run(1024, 502, 1, true)});
  cache.insert_clean(Lpn(2040), 700, 20);
  CHECK(cache.entries().back() == run(2040, 700, 8));
}

TEST_CASE("consecutive trims extend a dirty unmapped run") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  for (std::uint64_t lpn = 100; lpn < 110; ++lpn) cache.set(Lpn(lpn), kUnmappedPpn);
  CHECK(cache.entries() == Runs{run(100, kUnmappedPpn, 10, true)});
}

TEST_CASE("LRU evicts the least recently used entry") {
  EntryCache cache(dftl_options());
  CHECK_FALSE(cache.victim().has_value());
  cache.insert_clean(Lpn(1), 10, 1);
  cache.insert_clean(Lpn(2), 20, 1);
  cache.insert_clean(Lpn(3), 30, 1);
  CHECK(cache.victim() == run(1, 10, 1));
  cache.lookup(Lpn(1));
  CHECK(cache.victim() == run(2, 20, 1));
  cache.set(Lpn(2), 21);
  CHECK(cache.victim() == run(3, 30, 1));
  CHECK(cache.peek(Lpn(3)) == 30u);  // peek is not an access
  CHECK(cache.victim() == run(3, 30, 1));
  cache.lookup(Lpn(4));  // a miss changes nothing
  CHECK(cache.victim() == run(3, 30, 1));
  cache.remove(Lpn(3));
  CHECK(cache.victim() == run(1, 10, 1));
  cache.remove(Lpn(1));
  CHECK(cache.victim() == run(2, 21, 1, true));
  cache.remove(Lpn(2));
  CHECK_FALSE(cache.victim().has_value());
  CHECK(cache.entry_count() == 0);
  CHECK(cache.dirty_count() == 0);
}

TEST_CASE("LRU: the parts of a split run keep its recency") {
  EntryCache cache(cftl_options(1 << 20, EntryEviction::lru));
  cache.insert_clean(Lpn(100), 200, 10);
  cache.insert_clean(Lpn(200), 300, 1);
  cache.set(Lpn(105), 500);
  std::vector<std::uint64_t> order;
  while (auto victim = cache.victim()) {
    order.push_back(victim->lpn.value);
    cache.remove(victim->lpn);
  }
  CHECK(order == std::vector<std::uint64_t>{100, 106, 200, 105});
}

TEST_CASE("LFU evicts the least frequently used entry, the least recent among equals") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(1), 10, 1);
  cache.insert_clean(Lpn(2), 20, 1);
  cache.insert_clean(Lpn(3), 30, 1);
  CHECK(cache.victim()->lpn == Lpn(1));  // all at frequency 1: least recent
  cache.lookup(Lpn(1));
  CHECK(cache.victim()->lpn == Lpn(2));
  cache.lookup(Lpn(2));
  CHECK(cache.victim()->lpn == Lpn(3));
  cache.lookup(Lpn(3));
  cache.lookup(Lpn(3));
  CHECK(cache.victim()->lpn == Lpn(1));  // 1 and 2 at frequency 2, 1 used longer ago
  cache.lookup(Lpn(1));
  CHECK(cache.victim()->lpn == Lpn(2));
  cache.lookup(Lpn(2));
  // All at frequency 3 now; 3 reached it first.
  CHECK(cache.victim()->lpn == Lpn(3));
  cache.insert_clean(Lpn(4), 40, 1);
  CHECK(cache.victim()->lpn == Lpn(4));  // a new entry starts at frequency 1
  cache.remove(Lpn(4));
  CHECK(cache.victim()->lpn == Lpn(3));
}

TEST_CASE("LFU: the parts of a split run keep its frequency, the written page starts anew") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  for (int i = 0; i < 3; ++i) cache.lookup(Lpn(100 + i));  // the run: frequency 4
  cache.insert_clean(Lpn(200), 300, 1);
  cache.lookup(Lpn(200));
  cache.lookup(Lpn(200));  // frequency 3, more recent than the run
  CHECK(cache.victim()->lpn == Lpn(200));
  cache.set(Lpn(105), 500);              // left and right stay at 4, the written page at 1
  cache.insert_clean(Lpn(300), 400, 1);  // frequency 1, more recent
  std::vector<std::uint64_t> order;
  while (auto victim = cache.victim()) {
    order.push_back(victim->lpn.value);
    cache.remove(victim->lpn);
  }
  CHECK(order == std::vector<std::uint64_t>{105, 300, 200, 100, 106});
}

TEST_CASE("LFU: writing a run page by page leaves its count with the rest of the run") {
  EntryCache cache(cftl_options());
  cache.insert_clean(Lpn(100), 200, 10);
  for (std::uint64_t lpn = 100; lpn < 104; ++lpn) {
    cache.lookup(Lpn(lpn));
    cache.set(Lpn(lpn), static_cast<std::uint32_t>(lpn * 7));  // not consecutive: one entry each
  }
  CHECK(cache.entries() == Runs{run(100, 700, 1, true), run(101, 707, 1, true), run(102, 714, 1, true),
                                run(103, 721, 1, true), run(104, 204, 6)});
  cache.insert_clean(Lpn(300), 400, 1);
  cache.lookup(Lpn(300));  // frequency 2: above the written pages, below the run (5)
  std::vector<std::uint64_t> order;
  while (auto victim = cache.victim()) {
    order.push_back(victim->lpn.value);
    cache.remove(victim->lpn);
  }
  CHECK(order == std::vector<std::uint64_t>{100, 101, 102, 103, 300, 104});
}

TEST_CASE("LFU ages: an entry whose accesses stopped is evicted in the end") {
  EntryCache cache(cftl_options(2 * 12));
  cache.insert_clean(Lpn(1), 10, 1);
  for (int i = 0; i < 3; ++i) cache.lookup(Lpn(1));  // frequency 4
  // Pages read once each pass through the other entry. Plain LFU would evict every one of
  // them and keep LPN 1 forever; with the age they enter ever higher and overtake it.
  std::uint64_t newcomers = 0;
  while (cache.peek(Lpn(1)) && newcomers < 100) {
    cache.insert_clean(Lpn(100 + newcomers++), 0, 1);
    while (cache.over_budget()) cache.remove(cache.victim()->lpn);
  }
  CHECK_FALSE(cache.peek(Lpn(1)).has_value());
  CHECK(newcomers == 8);
}

TEST_CASE("take_dirty and next_dirty see dirty entries only") {
  EntryCache cache(cftl_options());
  cache.set(Lpn(5), 50);
  cache.set(Lpn(10), 100);
  cache.insert_clean(Lpn(15), 150, 3);
  cache.set(Lpn(20), 200);
  CHECK(cache.dirty_count() == 3);
  CHECK(cache.next_dirty(Lpn(0)) == Lpn(5));
  CHECK(cache.next_dirty(Lpn(5)) == Lpn(5));
  CHECK(cache.next_dirty(Lpn(6)) == Lpn(10));
  CHECK(cache.next_dirty(Lpn(11)) == Lpn(20));
  CHECK_FALSE(cache.next_dirty(Lpn(21)).has_value());

  CHECK(cache.take_dirty(Lpn(0), Lpn(0)).empty());
  CHECK(cache.take_dirty(Lpn(11), Lpn(20)).empty());  // 15 is clean, 20 is past the end
  CHECK(cache.take_dirty(Lpn(5), Lpn(20)) == Runs{run(5, 50, 1), run(10, 100, 1)});
  CHECK(cache.dirty_count() == 1);
  CHECK(cache.next_dirty(Lpn(0)) == Lpn(20));
  CHECK(cache.entry_count() == 4);  // taking marks clean, keeps the entries
  CHECK(cache.peek(Lpn(10)) == 100u);
  CHECK(cache.take_dirty(Lpn(0), Lpn(100)) == Runs{run(20, 200, 1)});
  CHECK(cache.dirty_count() == 0);
  CHECK_FALSE(cache.next_dirty(Lpn(0)).has_value());

  SECTION("a taken entry turns dirty again when written") {
    cache.set(Lpn(10), 101);
    CHECK(cache.next_dirty(Lpn(0)) == Lpn(10));
    CHECK(cache.dirty_count() == 1);
  }
  SECTION("removing a dirty entry forgets it") {
    cache.set(Lpn(16), 161);
    CHECK(cache.next_dirty(Lpn(0)) == Lpn(16));
    cache.remove(Lpn(16));
    CHECK(cache.dirty_count() == 0);
    CHECK_FALSE(cache.next_dirty(Lpn(0)).has_value());
    CHECK(cache.entries() ==
          Runs{run(5, 50, 1), run(10, 100, 1), run(15, 150, 1), run(17, 152, 1), run(20, 200, 1)});
  }
}

TEST_CASE("budget: every entry costs entry_bytes whatever its length") {
  EntryCache cache(cftl_options(36));
  CHECK(cache.capacity_bytes() == 36);
  CHECK(cache.bytes_used() == 0);
  CHECK_FALSE(cache.over_budget());
  cache.insert_clean(Lpn(100), 200, 10);
  CHECK(cache.bytes_used() == 12);
  cache.set(Lpn(105), 500);
  CHECK(cache.bytes_used() == 36);
  CHECK_FALSE(cache.over_budget());  // exactly full
  cache.set(Lpn(102), 501);
  CHECK(cache.entry_count() == 5);
  CHECK(cache.bytes_used() == 60);
  CHECK(cache.over_budget());
  while (cache.over_budget()) cache.remove(cache.victim()->lpn);
  CHECK(cache.entry_count() == 3);
  CHECK(cache.bytes_used() == 36);
}

TEST_CASE("a capacity of zero is over budget as soon as anything is cached") {
  EntryCache cache(EntryCacheOptions{0, 8, false, EntryEviction::lru});
  CHECK_FALSE(cache.over_budget());
  cache.set(Lpn(1), 1);
  CHECK(cache.over_budget());
}
