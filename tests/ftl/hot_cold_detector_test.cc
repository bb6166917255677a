// CFTL's hot/cold detector as doc/ftl.md describes it: per logical block, page reads counted
// and halved at every aging period (lazily, when the block is next looked at), read-hot from
// the threshold on, write-cold once a whole aging period has gone by without a write to it.
#include <catch2/catch.hpp>

#include "ftl/hot_cold_detector.h"

using flashdir::ftl::HotColdDetector;

namespace {

constexpr std::uint64_t kPeriod = 10;    // host requests per aging period
constexpr std::uint32_t kThreshold = 8;  // page reads that make a block read-hot

// One host request reading (or writing) `pages` pages of `lbn`.
void read(HotColdDetector& detector, std::uint64_t lbn, std::uint32_t pages) {
  detector.record(lbn, pages, false);
  detector.end_request();
}
void write(HotColdDetector& detector, std::uint64_t lbn, std::uint32_t pages) {
  detector.record(lbn, pages, true);
  detector.end_request();
}
// `count` host requests that touch none of the blocks looked at.
void elsewhere(HotColdDetector& detector, std::uint64_t count) {
  for (std::uint64_t i = 0; i < count; ++i) detector.end_request();
}

}  // namespace

TEST_CASE("hot/cold detector: reads are counted in pages, per logical block", "[ftl][cftl][detector]") {
  HotColdDetector detector(4, kThreshold, kPeriod);
  CHECK(detector.reads(1) == 0);
  read(detector, 1, 3);
  read(detector, 1, 2);
  read(detector, 2, 1);
  write(detector, 1, 4);  // writes are no reads
  CHECK(detector.reads(1) == 5);
  CHECK(detector.reads(2) == 1);
  CHECK(detector.reads(0) == 0);
  // The count saturates instead of wrapping.
  read(detector, 3, 70000);
  CHECK(detector.reads(3) == 65535);
}

TEST_CASE("hot/cold detector: read-hot from the threshold on", "[ftl][cftl][detector]") {
  HotColdDetector detector(2, kThreshold, kPeriod);
  read(detector, 0, kThreshold - 1);
  CHECK_FALSE(detector.read_hot_write_cold(0));
  read(detector, 0, 1);
  CHECK(detector.read_hot_write_cold(0));  // never written: write-cold
  CHECK_FALSE(detector.read_hot_write_cold(1));
  // However low the threshold, a block never read is not read-hot.
  HotColdDetector eager(1, 0, kPeriod);
  CHECK_FALSE(eager.read_hot_write_cold(0));
  read(eager, 0, 1);
  CHECK(eager.read_hot_write_cold(0));
}

TEST_CASE("hot/cold detector: write-cold once a whole aging period has no write", "[ftl][cftl][detector]") {
  HotColdDetector detector(2, kThreshold, kPeriod);
  write(detector, 0, 1);  // request 0
  // Requests 1, 2, ... read it. The FTL asks while a request is under way, and the last period
  // is the kPeriod requests ending with that one: from request kPeriod on, it holds no write.
  for (std::uint64_t request = 1; request <= kPeriod; ++request) {
    detector.record(0, 4, false);
    INFO("request " << request << " reads it");
    CHECK(detector.read_hot_write_cold(0) == (request == kPeriod));
    detector.end_request();
  }
  // A write to another block changes nothing; one to this block makes it write-hot again.
  write(detector, 1, 1);
  CHECK(detector.read_hot_write_cold(0));
  write(detector, 0, 1);
  CHECK_FALSE(detector.read_hot_write_cold(0));
}

TEST_CASE("hot/cold detector: read counts halve at every aging period", "[ftl][cftl][detector]") {
  HotColdDetector detector(2, kThreshold, kPeriod);
  read(detector, 0, 40);  // request 0, in the first period
  elsewhere(detector, kPeriod - 2);
  CHECK(detector.reads(0) == 40);  // request kPeriod - 1: still the first period
  elsewhere(detector, 1);
  CHECK(detector.reads(0) == 20);  // the second period
  elsewhere(detector, kPeriod);
  CHECK(detector.reads(0) == 10);
  CHECK(detector.read_hot_write_cold(0));
  elsewhere(detector, kPeriod);
  CHECK(detector.reads(0) == 5);  // below the threshold again: no longer read-hot
  CHECK_FALSE(detector.read_hot_write_cold(0));
  // Halving happens lazily: new reads add to the count halved so far.
  elsewhere(detector, 2 * kPeriod);
  read(detector, 0, 3);
  CHECK(detector.reads(0) == 1 + 3);  // 40 halved five times, plus 3
  // Periods are counted from the first request, not from a block's last read: reads just
  // before a period ends are halved at its end.
  elsewhere(detector, kPeriod - 3);
  read(detector, 1, 16);  // two requests before the period ends
  CHECK(detector.reads(1) == 16);
  CHECK(detector.reads(0) == 4);
  elsewhere(detector, 1);
  CHECK(detector.reads(1) == 8);
  CHECK(detector.reads(0) == 2);
  // Long unread, a count fades away entirely.
  elsewhere(detector, 40 * kPeriod);
  CHECK(detector.reads(0) == 0);
  CHECK(detector.reads(1) == 0);
}
