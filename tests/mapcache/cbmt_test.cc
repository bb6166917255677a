// Cbmt: CFTL's cached block mapping table (LRU-bounded lbn -> physical block).
#include <catch2/catch.hpp>

#include "ftl/mapcache/cbmt.h"

using namespace flashdir;
using namespace flashdir::ftl;

TEST_CASE("CBMT maps logical blocks to physical blocks and back") {
  Cbmt cbmt(4);
  CHECK(cbmt.capacity() == 4);
  CHECK(cbmt.size() == 0);
  CHECK_FALSE(cbmt.lookup(1).has_value());
  cbmt.insert(1, BlockNumber(10));
  cbmt.insert(2, BlockNumber(20));
  CHECK(cbmt.size() == 2);
  CHECK(cbmt.contains(1));
  CHECK_FALSE(cbmt.contains(3));
  CHECK(cbmt.lookup(2) == BlockNumber(20));
  CHECK(cbmt.lbn_of(BlockNumber(10)) == 1u);
  CHECK(cbmt.lbn_of(BlockNumber(20)) == 2u);
  CHECK_FALSE(cbmt.lbn_of(BlockNumber(30)).has_value());
}

TEST_CASE("a full CBMT evicts its least recently used entry") {
  Cbmt cbmt(2);
  cbmt.insert(1, BlockNumber(10));
  cbmt.insert(2, BlockNumber(20));
  SECTION("by insertion order") {
    cbmt.insert(3, BlockNumber(30));
    CHECK_FALSE(cbmt.contains(1));
    CHECK_FALSE(cbmt.lbn_of(BlockNumber(10)).has_value());
    CHECK(cbmt.contains(2));
    CHECK(cbmt.contains(3));
  }
  SECTION("a lookup makes an entry most recently used") {
    CHECK(cbmt.lookup(1) == BlockNumber(10));
    cbmt.insert(3, BlockNumber(30));
    CHECK(cbmt.contains(1));
    CHECK_FALSE(cbmt.contains(2));
    CHECK_FALSE(cbmt.lbn_of(BlockNumber(20)).has_value());
  }
  SECTION("contains and lbn_of are not uses") {
    CHECK(cbmt.contains(1));
    CHECK(cbmt.lbn_of(BlockNumber(10)) == 1u);
    cbmt.insert(3, BlockNumber(30));
    CHECK_FALSE(cbmt.contains(1));
  }
  SECTION("re-registering makes an entry most recently used") {
    cbmt.insert(1, BlockNumber(10));
    cbmt.insert(3, BlockNumber(30));
    CHECK(cbmt.contains(1));
    CHECK_FALSE(cbmt.contains(2));
  }
  CHECK(cbmt.size() == 2);
}

TEST_CASE("re-registering a logical block moves it to the new physical block") {
  Cbmt cbmt(2);
  cbmt.insert(1, BlockNumber(10));
  cbmt.insert(1, BlockNumber(11));
  CHECK(cbmt.size() == 1);
  CHECK(cbmt.lookup(1) == BlockNumber(11));
  CHECK_FALSE(cbmt.lbn_of(BlockNumber(10)).has_value());
  CHECK(cbmt.lbn_of(BlockNumber(11)) == 1u);
}

TEST_CASE("registering a physical block again drops its older logical block") {
  Cbmt cbmt(4);
  cbmt.insert(1, BlockNumber(10));
  cbmt.insert(2, BlockNumber(20));
  cbmt.insert(3, BlockNumber(10));
  CHECK_FALSE(cbmt.contains(1));
  CHECK(cbmt.lbn_of(BlockNumber(10)) == 3u);
  cbmt.insert(2, BlockNumber(10));
  CHECK_FALSE(cbmt.contains(3));
  CHECK(cbmt.lbn_of(BlockNumber(10)) == 2u);
  CHECK_FALSE(cbmt.lbn_of(BlockNumber(20)).has_value());
  CHECK(cbmt.size() == 1);
}

TEST_CASE("erase forgets both directions") {
  Cbmt cbmt(2);
  cbmt.insert(1, BlockNumber(10));
  cbmt.insert(2, BlockNumber(20));
  cbmt.erase(1);
  cbmt.erase(7);  // not registered: nothing happens
  CHECK(cbmt.size() == 1);
  CHECK_FALSE(cbmt.contains(1));
  CHECK_FALSE(cbmt.lookup(1).has_value());
  CHECK_FALSE(cbmt.lbn_of(BlockNumber(10)).has_value());
  // The freed slot is reused without evicting anything.
  cbmt.insert(3, BlockNumber(30));
  CHECK(cbmt.contains(2));
  CHECK(cbmt.contains(3));
  CHECK(cbmt.size() == 2);
}

TEST_CASE("a CBMT of capacity 0 keeps nothing") {
  Cbmt cbmt(0);
  cbmt.insert(1, BlockNumber(10));
  CHECK(cbmt.size() == 0);
  CHECK_FALSE(cbmt.contains(1));
  CHECK_FALSE(cbmt.lookup(1).has_value());
  CHECK_FALSE(cbmt.lbn_of(BlockNumber(10)).has_value());
  cbmt.erase(1);
  CHECK(cbmt.size() == 0);
}

TEST_CASE("a CBMT of capacity 1 keeps the last registration") {
  Cbmt cbmt(1);
  for (std::uint64_t lbn = 0; lbn < 100; ++lbn) {
    cbmt.insert(lbn, BlockNumber(1000 + lbn));
    REQUIRE(cbmt.size() == 1);
    REQUIRE(cbmt.lookup(lbn) == BlockNumber(1000 + lbn));
    if (lbn > 0) REQUIRE_FALSE(cbmt.lbn_of(BlockNumber(999 + lbn)).has_value());
  }
}
