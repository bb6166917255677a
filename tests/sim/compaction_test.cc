// Address compaction: chunks of one erase block get dense numbers; locality is kept, requests
// are cut only where their chunks are not neighbours any more, devices never share a chunk.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "flashdir/sim/compaction.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

constexpr std::uint32_t kPage = 4096;
constexpr std::uint32_t kPagesPerChunk = 4;
constexpr std::uint64_t kSectorsPerPage = kPage / 512;
constexpr std::uint64_t kSectorsPerChunk = kSectorsPerPage * kPagesPerChunk;

// A DiskSim trace ("time device sector sectors type", type 1 = read), devices folded.
Trace disksim(const std::string& text, TraceOptions options = {}) {
  std::istringstream in(text);
  auto trace = parse_trace(in, "test", options);
  INFO(trace.status().to_string());
  REQUIRE(trace.is_ok());
  return std::move(trace).value();
}

// One line of a DiskSim trace: `pages` pages at `page` of `chunk` on `device`.
std::string line(std::uint64_t time, std::uint32_t device, std::uint64_t chunk, std::uint64_t page,
                 std::uint64_t pages, bool read = false) {
  return std::to_string(time) + " " + std::to_string(device) + " " +
         std::to_string(chunk * kSectorsPerChunk + page * kSectorsPerPage) + " " +
         std::to_string(pages * kSectorsPerPage) + " " + (read ? "1" : "0") + "\n";
}

CompactTrace compact(const Trace& trace, ChunkOrder order = ChunkOrder::address,
                     std::uint32_t pages_per_chunk = kPagesPerChunk) {
  auto result = compact_trace(trace, kPage, pages_per_chunk, order);
  INFO(result.status().to_string());
  REQUIRE(result.is_ok());
  return std::move(result).value();
}

ReplayRequest piece(std::uint64_t arrival, std::uint64_t lpn, std::uint32_t count, bool read,
                    bool continues) {
  return ReplayRequest{arrival, lpn, count, read ? IoRequest::Op::read : IoRequest::Op::write, continues};
}

}  // namespace

TEST_CASE("compaction: touched chunks get dense numbers in address order, pages keep their place",
          "[sim][compaction]") {
  const Trace trace = disksim(line(0, 0, 5000, 3, 1) + line(10, 0, 100, 0, 1, true) + line(20, 0, 101, 2, 1) +
                              line(30, 0, 100, 1, 1, true));
  const CompactTrace c = compact(trace);
  CHECK(c.chunk_count == 3);
  CHECK(c.footprint_pages() == 12);
  CHECK(c.touched_pages == 4);
  CHECK(c.trace_requests == 4);
  CHECK(c.cut_requests == 0);
  CHECK(c.timed);
  // Chunks 100, 101, 5000 -> 0, 1, 2: neighbours stay neighbours, the gap is gone.
  REQUIRE(c.requests.size() == 4);
  CHECK(c.requests[0] == piece(0, 2 * 4 + 3, 1, false, false));
  CHECK(c.requests[1] == piece(10, 0, 1, true, false));
  CHECK(c.requests[2] == piece(20, 1 * 4 + 2, 1, false, false));
  CHECK(c.requests[3] == piece(30, 1, 1, true, false));

  const CompactTrace by_touch = compact(trace, ChunkOrder::first_touch);
  CHECK(by_touch.chunk_count == 3);
  CHECK(by_touch.requests[0].first_lpn == 0 * 4 + 3);  // chunk 5000 came first
  CHECK(by_touch.requests[1].first_lpn == 1 * 4 + 0);
  CHECK(by_touch.requests[2].first_lpn == 2 * 4 + 2);
}

TEST_CASE("compaction: a request across chunks stays whole unless its chunks are not neighbours",
          "[sim][compaction]") {
  // Pages 3 of chunk 100 to 1 of chunk 101: three pages across a chunk boundary.
  const Trace trace = disksim(line(0, 0, 101, 0, 1) + line(5, 0, 100, 3, 3) + line(9, 0, 200, 2, 12, true));
  SECTION("by address: never cut") {
    const CompactTrace c = compact(trace);
    CHECK(c.cut_requests == 0);
    REQUIRE(c.requests.size() == 3);
    CHECK(c.requests[1] == piece(5, 3, 3, false, false));
    // 12 pages from page 2 of chunk 200 run over chunks 200..203, all neighbours.
    CHECK(c.requests[2] == piece(9, 2 * 4 + 2, 12, true, false));
    CHECK(c.chunk_count == 6);
    CHECK(c.max_request_pages == 12);
  }
  SECTION("by first touch: cut where the numbers jump, the runs between kept whole") {
    const CompactTrace c = compact(trace, ChunkOrder::first_touch);
    // Chunk 101 -> 0 (first request), chunk 100 -> 1, then 200..203 -> 2..5.
    CHECK(c.cut_requests == 1);
    REQUIRE(c.requests.size() == 4);
    CHECK(c.requests[0] == piece(0, 0, 1, false, false));
    CHECK(c.requests[1] == piece(5, 1 * 4 + 3, 1, false, true));   // chunk 100's page 3 ...
    CHECK(c.requests[2] == piece(5, 0 * 4 + 0, 2, false, false));  // ... then chunk 101's pages 0-1
    CHECK(c.requests[3] == piece(9, 2 * 4 + 2, 12, true, false));  // new chunks in a row: one run
    CHECK(c.touched_pages == 1 + 3 + 12 - 1);                      // page 0 of chunk 101 twice
  }
}

TEST_CASE("compaction: pages covered by an unaligned request", "[sim][compaction]") {
  // Bytes [512, 5632): pages 0 and 1.
  const Trace trace = disksim("0 0 1 10 0\n");
  const CompactTrace c = compact(trace);
  REQUIRE(c.requests.size() == 1);
  CHECK(c.requests[0].first_lpn == 0);
  CHECK(c.requests[0].page_count == 2);
  CHECK_FALSE(c.timed);  // a single request arrives at 0
}

TEST_CASE("compaction: distinct devices never share a chunk", "[sim][compaction]") {
  // The same device-relative address on two devices, and a device whose folded range starts
  // inside what a 2 MiB chunk would cover.
  const Trace trace =
      disksim(line(0, 0, 0, 0, 1) + line(1, 1, 0, 0, 1) + line(2, 2, 0, 1, 1) + line(3, 1, 0, 0, 1, true));
  REQUIRE(trace.devices.size() == 3);
  for (std::uint32_t pages_per_chunk : {kPagesPerChunk, 512u}) {  // 16 KiB and 2 MiB chunks
    INFO(pages_per_chunk);
    const CompactTrace c = compact(trace, ChunkOrder::address, pages_per_chunk);
    CHECK(c.chunk_count == 3);
    REQUIRE(c.requests.size() == 4);
    CHECK(c.requests[0].first_lpn == 0);
    CHECK(c.requests[1].first_lpn == pages_per_chunk);
    CHECK(c.requests[2].first_lpn == 2 * pages_per_chunk + 1);
    CHECK(c.requests[3].first_lpn == pages_per_chunk);  // device 1 again: the same page
    CHECK(c.touched_pages == 3);
  }
  TraceOptions one;
  one.only_device = 1;
  const CompactTrace only = compact(disksim(line(0, 0, 7, 0, 1) + line(1, 1, 9, 2, 1), one));
  CHECK(only.chunk_count == 1);
  REQUIRE(only.requests.size() == 1);
  CHECK(only.requests[0].first_lpn == 2);
}

TEST_CASE("compaction: a synthetic workload maps whole into its footprint", "[sim][compaction]") {
  auto spec = parse_synthetic("zipf:0.9,read=0.5,ws=8M,size=16K,align=4K,count=2000,seed=3,interarrival=1us");
  REQUIRE(spec.is_ok());
  auto trace = generate(*spec);
  REQUIRE(trace.is_ok());
  for (ChunkOrder order : {ChunkOrder::address, ChunkOrder::first_touch}) {
    const CompactTrace c = compact(*trace, order, 32);
    CHECK(c.trace_requests == 2000);
    CHECK(c.timed);
    CHECK(c.chunk_count <= 8 * 1024 / 128);
    std::uint64_t pages = 0;
    std::uint64_t whole = 0;
    for (const ReplayRequest& r : c.requests) {
      CHECK(r.first_lpn + r.page_count <= c.footprint_pages());
      pages += r.page_count;
      whole += r.continues ? 0 : 1;
    }
    CHECK(pages == 2000 * 4);
    CHECK(whole == 2000);
    if (order == ChunkOrder::address) {
      CHECK(c.cut_requests == 0);
      CHECK(c.requests.size() == 2000);
    }
  }
}
