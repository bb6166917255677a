// The RAM stores below the chip rules: pages never written read as zeros, whatever order the
// others were written in, and a discarded block reads as zeros again.
#include <catch2/catch.hpp>
#include <vector>

#include "flashdir/nand/page_store.h"

using namespace flashdir;

namespace {

const Geometry kGeometry{512, 64, 8, 4};

std::vector<std::uint8_t> read_data(PageStore& store, std::uint64_t page) {
  std::vector<std::uint8_t> data(kGeometry.page_size_bytes, 0xEE);
  REQUIRE(store.read_pages(Ppn(page), 1, data, {}).is_ok());
  return data;
}

std::vector<std::uint8_t> read_oob(PageStore& store, std::uint64_t page) {
  std::vector<std::uint8_t> oob(kGeometry.oob_size_bytes, 0xEE);
  REQUIRE(store.read_pages(Ppn(page), 1, {}, oob).is_ok());
  return oob;
}

void write(PageStore& store, std::uint64_t page, std::uint8_t fill, bool with_data) {
  const std::vector<std::uint8_t> data(kGeometry.page_size_bytes, fill);
  const std::vector<std::uint8_t> oob(kGeometry.oob_size_bytes, fill);
  REQUIRE(store.write_pages(Ppn(page), 1, with_data ? ConstByteSpan(data) : ConstByteSpan(), oob).is_ok());
}

}  // namespace

TEST_CASE("memory stores: unwritten pages read as zeros in any write order, and after a discard",
          "[nand]") {
  for (const bool keep_data : {true, false}) {
    INFO("backend " << (keep_data ? "memory" : "metadata-only"));
    auto store = keep_data ? make_memory_store(kGeometry) : make_metadata_store(kGeometry);
    const std::vector<std::uint8_t> zero_page(kGeometry.page_size_bytes, 0);
    const std::vector<std::uint8_t> zero_oob(kGeometry.oob_size_bytes, 0);
    // Block 1 is pages 8-15: write 13 first, then 9, skipping the rest.
    write(*store, 13, 0x13, true);
    write(*store, 9, 0x09, true);
    for (std::uint64_t page = 8; page < 16; ++page) {
      INFO("page " << page);
      if (page == 9 || page == 13) {
        CHECK(read_oob(*store, page) == std::vector<std::uint8_t>(kGeometry.oob_size_bytes, page == 9 ? 0x09 : 0x13));
        CHECK(read_data(*store, page) == std::vector<std::uint8_t>(kGeometry.page_size_bytes, page == 9 ? 0x09 : 0x13));
      } else {
        CHECK(read_oob(*store, page) == zero_oob);
        CHECK(read_data(*store, page) == zero_page);
      }
    }
    // A page written with OOB only has no data, even with data on both sides of it.
    write(*store, 11, 0x11, false);
    CHECK(read_oob(*store, 11) == std::vector<std::uint8_t>(kGeometry.oob_size_bytes, 0x11));
    CHECK(read_data(*store, 11) == zero_page);
    REQUIRE(store->discard_block(BlockNumber(1)).is_ok());
    for (std::uint64_t page = 8; page < 16; ++page) {
      INFO("page " << page << " after the discard");
      CHECK(read_oob(*store, page) == zero_oob);
      CHECK(read_data(*store, page) == zero_page);
    }
    write(*store, 10, 0x10, true);
    CHECK(read_data(*store, 9) == zero_page);
    CHECK(read_data(*store, 10) == std::vector<std::uint8_t>(kGeometry.page_size_bytes, 0x10));
  }
}
