// Hits on different files read the chip outside the engine's cache lock (EngineCore::read_hit):
// while they do, a writer's admissions evict their slots and the FTL's GC moves their pages.
// Every byte a reader gets must be its file's. And a miss waiting for a slow backing file holds
// no lock that hits need.
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <thread>

#include "engine_rig.h"
#include "support/seed.h"

using flashdir::testing::Backend;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

TEST_CASE("hits on different files, with a writer forcing evictions and GC, serve only their files' bytes") {
  const auto backend = GENERATE(Backend::memory, Backend::image);
  INFO(flashdir::testing::backend_label(backend));
  flashdir::cache::EngineOptions options;
  options.read_sequential_cutoff_bytes = 0;  // everything admitted
  options.write_sequential_cutoff_bytes = 0;
  EngineRig rig(options, 48, flashdir::format::RamPolicy::tree, 4096, backend);
  const std::uint32_t P = rig.page_size();
  constexpr std::uint64_t kReaderPages = 160;  // the readers' files fit; with the writer's they do not
  constexpr std::uint64_t kWriterPages = 256;
  constexpr int kReaders = 3;
  const auto rounds = static_cast<int>(flashdir::testing::test_knob("FLASHDIR_CACHE_THREAD_ROUNDS", 400));
  for (int r = 0; r < kReaders; ++r) rig.put("reader" + std::to_string(r), pattern(50 + r, kReaderPages * P));
  rig.put("writer", pattern(49, kWriterPages * P));
  for (int r = 0; r < kReaders; ++r)  // all cached before the threads start: their first reads hit
    REQUIRE(rig.read_through("reader" + std::to_string(r), 0, kReaderPages * P) == pattern(50 + r, kReaderPages * P));
  const auto hits_before = rig.engine().stats().read_hit_pages;

  std::atomic<int> failures{0};
  std::atomic<int> readers_running{kReaders};
  std::vector<std::thread> threads;
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {  // random runs of 1 to 5 pages, at page offsets or not
      // No Catch assertions off the main thread: Catch2 v2 is not thread-safe.
      const auto expected = pattern(50 + r, kReaderPages * P);
      auto file = rig.engine().open_file("reader" + std::to_string(r));
      if (!file.is_ok()) {
        --readers_running;
        return static_cast<void>(++failures);
      }
      std::uint64_t state = 0x2545F4914F6CDD1DULL * (r + 1);
      std::vector<std::uint8_t> buffer;
      for (int i = 0; i < rounds * 4; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const std::uint64_t page = (state >> 33) % (kReaderPages - 5);
        const std::uint64_t offset = page * P + ((state >> 20) % 2 == 0 ? 0 : (state >> 8) % P);
        buffer.assign(((state >> 40) % 5 + 1) * P, 0);
        auto got = rig.engine().read(*file, offset, buffer);
        if (!got.is_ok() || *got != buffer.size() ||
            !std::equal(buffer.begin(), buffer.end(), expected.begin() + static_cast<std::ptrdiff_t>(offset)))
          ++failures;
      }
      if (!rig.engine().release(*file).is_ok()) ++failures;
      --readers_running;
    });
  }
  threads.emplace_back([&] {  // rewrites of the writer's file: admissions evict, overwrites make GC work
    auto file = rig.engine().open_file("writer");
    if (!file.is_ok()) return static_cast<void>(++failures);
    std::uint64_t state = 77;
    std::uint64_t written = 0;
    while (readers_running > 0 || written < 2 * kWriterPages) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::uint64_t page = (state >> 33) % (kWriterPages - 3);
      const auto bytes = pattern(49, 4 * P, page * P);  // the same bytes again: the file stays checkable
      if (!rig.engine().write(*file, page * P, bytes).is_ok()) ++failures;
      written += 4;
    }
    if (!rig.engine().release(*file).is_ok()) ++failures;
  });
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  const auto stats = rig.engine().stats();
  CHECK(stats.read_hit_pages > hits_before);
  CHECK(stats.evicted_pages > 0);
  CHECK(rig.engine().ftl_stats().gc_runs > 0);
  CHECK(rig.get("writer") == pattern(49, kWriterPages * P));
}

TEST_CASE("hits do not wait for a slow backing file: a miss reads it without the cache lock") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("cached", pattern(1, 8 * P));
  rig.put("slow", pattern(2, 8 * P));
  REQUIRE(rig.read_through("cached", 0, 8 * P) == pattern(1, 8 * P));
  rig.backing_faults().read_latency_us = 2'000'000;  // every backing read from now on: 2 s

  std::atomic<bool> miss_started{false}, miss_done{false};
  std::vector<std::uint8_t> missed(8 * P);
  flashdir::Status miss_status;
  std::thread miss([&] {  // no Catch assertions off the main thread: they are not thread-safe
    miss_started = true;
    auto slow = rig.engine().open_file("slow");
    miss_status = slow.status();
    if (slow.is_ok()) {
      auto got = rig.engine().read(*slow, 0, missed);
      miss_status = got.is_ok() ? rig.engine().release(*slow) : got.status();
    }
    miss_done = true;
  });
  while (!miss_started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the miss is in its backing read
  auto file = rig.engine().open_file("cached");
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> got(8 * P);
  for (int i = 0; i < 20; ++i) REQUIRE(rig.engine().read(*file, 0, got).is_ok());
  const bool hits_done_during_the_miss = !miss_done;
  REQUIRE(rig.engine().release(*file).is_ok());
  miss.join();
  INFO(miss_status.to_string());
  REQUIRE(miss_status.is_ok());
  CHECK(hits_done_during_the_miss);
  CHECK(got == pattern(1, 8 * P));
  CHECK(missed == pattern(2, 8 * P));
}
