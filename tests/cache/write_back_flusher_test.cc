// Write-back's flusher: sequential streams written back behind their writers, and batches that
// go in pieces and give way to an fsync, close or truncate waiting for the file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

#include "engine_rig.h"
#include "flashdir/random.h"
#include "support/seed.h"

using flashdir::SeededRandom;
using flashdir::cache::FileHandle;
using flashdir::testing::EngineRig;
using flashdir::testing::apply;
using flashdir::testing::pattern;
using flashdir::testing::streaming_in;

namespace {

// Writes `pages` pages of `file` in order, 8 at a time; returns what the file holds.
std::vector<std::uint8_t> write_in_order(EngineRig& rig, FileHandle file, std::uint64_t pages) {
  const std::uint32_t P = rig.page_size();
  std::vector<std::uint8_t> model;
  for (std::uint64_t page = 0; page < pages; page += 8) {
    const auto piece = pattern(static_cast<std::uint32_t>(page), 8ULL * P);
    REQUIRE(rig.engine().write(file, page * P, piece).is_ok());
    apply(model, page * P, piece);
  }
  return model;
}

}  // namespace

TEST_CASE("write-back: a sequential stream goes back behind its writer before its close; random writes stay") {
  EngineRig rig(streaming_in(8));
  const std::uint32_t P = rig.page_size();
  rig.put("stream", {});
  rig.put("random", {});
  auto stream = rig.engine().open_file("stream");
  auto random = rig.engine().open_file("random");
  REQUIRE(stream.is_ok());
  REQUIRE(random.is_ok());
  // 64 pages in order, 4 at a time; and 64 pages of the other file, none next to the last one.
  std::vector<std::uint8_t> streamed;
  for (std::uint64_t page = 0; page < 64; page += 4) {
    const auto piece = pattern(static_cast<std::uint32_t>(page), 4ULL * P);
    REQUIRE(rig.engine().write(*stream, page * P, piece).is_ok());
    apply(streamed, page * P, piece);
  }
  for (std::uint64_t i = 0; i < 64; ++i) {
    const std::uint64_t page = (i * 37) % 64;  // a step of 37 pages: never the page after the last
    REQUIRE(rig.engine().write(*random, page * P, pattern(static_cast<std::uint32_t>(1000 + page), P)).is_ok());
  }
  // The flusher takes the stream's batches as the writes ask (no watermark is near: the cache
  // holds far more than 128 pages); each write past the first 8 pages asked for one.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (rig.get("stream").size() < 48ULL * P && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::vector<std::uint8_t> before_close = rig.get("stream");
  REQUIRE(before_close.size() >= 48ULL * P);
  CHECK(std::equal(before_close.begin(), before_close.end(), streamed.begin()));
  CHECK(rig.get("random").empty());  // random writes are not a stream: they wait for the close
  REQUIRE(rig.engine().release(*stream).is_ok());
  REQUIRE(rig.engine().release(*random).is_ok());
  CHECK(rig.get("stream") == streamed);
  CHECK(rig.get("random").size() == 64ULL * P);
}

TEST_CASE("write-back: a stream's batch in flight gives way to an fsync after the write it is making") {
  // Batches of 64 pages, written 4 pages at a time, each write taking 20 ms: a batch holds the
  // file's backing for 16 writes (320 ms), which an fsync waited for whole.
  EngineRig rig(streaming_in(64, 4));
  rig.put("f", {});
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  rig.backing_faults().write_latency_us = 20'000;
  const std::vector<std::uint8_t> model = write_in_order(rig, *file, 128);
  // The flusher's first batch is on its way to the backing file.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (rig.backing_faults().writes == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(rig.backing_faults().writes > 0);
  const std::uint64_t writes_before = rig.backing_faults().writes;
  REQUIRE(rig.engine().fsync(*file).is_ok());
  // The write in flight, and at most one the flusher started after the fsync let the file go
  // (the fsync syncs the backing file without holding it); not the 15 left of the batch.
  CHECK(rig.backing_faults().writes - writes_before <= 2);
  CHECK(rig.engine().stats().dirty_pages > 0);
  // What the batch left stays dirty, and goes back with the rest.
  rig.backing_faults().write_latency_us = 0;
  REQUIRE(rig.engine().release(*file).is_ok());
  CHECK(rig.get("f") == model);
  CHECK(rig.engine().stats().dirty_pages == 0);
}

TEST_CASE("write-back: a flusher giving way mid-batch to rewrites, fsyncs, truncates and reopens loses no byte") {
  // Pieces of one page and a backing that takes 300 us a write: the flusher's stream batches are
  // nearly always in flight when the writer rewrites pages in them, fsyncs, truncates or closes,
  // so batches stop part-way (the written prefix clean, the rest dirty again) again and again.
  flashdir::testing::SeededRuns runs(0x91e1d);
  for (std::uint64_t run = 0; run < 4; ++run) {
    if (!runs.selected(run)) continue;
    INFO("replay: " << runs.replay_command(run));
    SeededRandom random(runs.seed(run));
    EngineRig rig(streaming_in(8, 1));
    const std::uint32_t P = rig.page_size();
    rig.put("f", {});
    auto file = rig.engine().open_file("f");
    REQUIRE(file.is_ok());
    rig.backing_faults().write_latency_us = 300;
    std::vector<std::uint8_t> model;
    std::uint64_t stream_page = 0;
    for (std::uint32_t step = 0; step < 300; ++step) {
      INFO("step " << step);
      const std::uint64_t choice = random.uniform(20);
      if (choice < 9) {  // the stream goes on: 1 to 8 pages after the last, from 0 past 96
        const std::uint64_t pages = random.between(1, 8);
        const auto bytes = pattern(step, pages * P, stream_page * P);
        REQUIRE(rig.engine().write(*file, stream_page * P, bytes).is_ok());
        apply(model, stream_page * P, bytes);
        stream_page = stream_page + pages > 96 ? 0 : stream_page + pages;
      } else if (choice < 13) {  // a rewrite anywhere, aligned or not
        const std::uint64_t offset = random.uniform(model.size() + P);
        const auto bytes = pattern(step, random.between(1, 3 * P), offset);
        REQUIRE(rig.engine().write(*file, offset, bytes).is_ok());
        apply(model, offset, bytes);
      } else if (choice < 15) {
        REQUIRE(rig.engine().fsync(*file).is_ok());
      } else if (choice < 16) {
        const std::uint64_t size = random.uniform(model.size() + 4 * P);
        REQUIRE(rig.engine().truncate(*file, size).is_ok());
        model.resize(size, 0);
        stream_page = std::min(stream_page, size / P);
      } else if (choice < 17) {
        REQUIRE(rig.engine().release(*file).is_ok());
        file = rig.engine().open_file("f");
        REQUIRE(file.is_ok());
      } else {
        const std::uint64_t offset = random.uniform(model.size() + 1);
        std::vector<std::uint8_t> read(std::min<std::uint64_t>(random.between(1, 16 * P), model.size() - offset));
        auto got = rig.engine().read(*file, offset, read);
        REQUIRE(got.is_ok());
        REQUIRE(*got == read.size());
        CHECK(read == std::vector<std::uint8_t>(model.begin() + static_cast<std::ptrdiff_t>(offset),
                                                model.begin() + static_cast<std::ptrdiff_t>(offset + read.size())));
      }
    }
    REQUIRE(rig.engine().release(*file).is_ok());
    CHECK(rig.get("f") == model);
    CHECK(rig.engine().stats().dirty_pages == 0);
  }
}

TEST_CASE("write-back: a flusher's pieces grow where the backing takes a write at once") {
  // Pieces of at least a page, 64 pages a batch: written a page at a time, 128 streamed pages
  // cost 128 writes; a piece that takes less than 5 ms doubles the next one.
  EngineRig rig(streaming_in(64, 1));
  rig.put("f", {});
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  const std::vector<std::uint8_t> model = write_in_order(rig, *file, 136);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (rig.engine().stats().written_back_pages < 128 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(rig.engine().stats().written_back_pages >= 128);
  CHECK(rig.backing_faults().writes < 32);
  REQUIRE(rig.engine().release(*file).is_ok());
  CHECK(rig.get("f") == model);
}

TEST_CASE("write-back: each open's stream goes back behind it while another open writes the file elsewhere") {
  // Two writers of one file, each sequential in a region of its own (fio's jobs with
  // offset_increment): interleaved, the file's writes made no stream, and nothing went back
  // before the close.
  EngineRig rig(streaming_in(8));
  const std::uint32_t P = rig.page_size();
  rig.put("f", {});
  auto low = rig.engine().open_file("f");
  auto high = rig.engine().open_file("f");
  REQUIRE(low.is_ok());
  REQUIRE(high.is_ok());
  std::vector<std::uint8_t> model;
  for (std::uint64_t page = 0; page < 64; page += 4) {
    for (const auto& [file, at] : {std::pair{*low, page}, std::pair{*high, 64 + page}}) {
      const auto piece = pattern(static_cast<std::uint32_t>(at), 4ULL * P);
      REQUIRE(rig.engine().write(file, at * P, piece).is_ok());
      apply(model, at * P, piece);
    }
  }
  // Each open's writes past its first 8 pages asked the flusher for a batch.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (rig.engine().stats().written_back_pages < 96 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(rig.engine().stats().written_back_pages >= 96);
  REQUIRE(rig.engine().release(*low).is_ok());
  REQUIRE(rig.engine().release(*high).is_ok());
  CHECK(rig.get("f") == model);
}
