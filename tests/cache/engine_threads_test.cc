// Many threads on one engine: readers, writers, truncation-free rewrites and evictions, on the
// same file and on different ones. Every read must return a state some writer produced.
#include <catch2/catch.hpp>
#include <thread>

#include "engine_rig.h"
#include "support/seed.h"

using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

// Page-sized records naming (page, version): a reader checks each page is whole and its own.
std::vector<std::uint8_t> record(std::uint32_t page_size, std::uint64_t page, std::uint64_t version) {
  std::vector<std::uint8_t> bytes(page_size);
  for (std::size_t i = 0; i < bytes.size(); i += 16) {
    for (int b = 0; b < 8; ++b) {
      bytes[i + b] = static_cast<std::uint8_t>(page >> (8 * b));
      bytes[i + 8 + b] = static_cast<std::uint8_t>(version >> (8 * b));
    }
  }
  return bytes;
}

bool is_record_of(const std::vector<std::uint8_t>& bytes, std::uint64_t page) {
  const std::vector<std::uint8_t> head(bytes.begin(), bytes.begin() + 16);
  for (std::size_t i = 0; i < bytes.size(); i += 16)
    if (!std::equal(head.begin(), head.end(), bytes.begin() + static_cast<std::ptrdiff_t>(i))) return false;
  std::uint64_t named = 0;
  for (int b = 0; b < 8; ++b) named |= std::uint64_t{bytes[b]} << (8 * b);
  return named == page;
}

}  // namespace

TEST_CASE("readers and writers on shared and private files, with evictions, see whole pages") {
  EngineRig rig({}, 48);
  const std::uint32_t P = rig.page_size();
  constexpr std::uint64_t kPages = 256;  // three files of it exceed the cache
  const auto rounds = static_cast<int>(flashdir::testing::test_knob("FLASHDIR_CACHE_THREAD_ROUNDS", 400));
  std::vector<std::uint8_t> initial;
  for (std::uint64_t p = 0; p < kPages; ++p) {
    const auto r = record(P, p, 0);
    initial.insert(initial.end(), r.begin(), r.end());
  }
  rig.put("shared", initial);
  for (int i = 0; i < 2; ++i) rig.put("own" + std::to_string(i), pattern(30 + i, kPages * P));

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {  // writers of whole records of the shared file
      auto file = rig.engine().open_file("shared");
      if (!file.is_ok()) return static_cast<void>(++failures);
      std::uint64_t state = 0x9e3779b97f4a7c15ULL * (t + 1);
      for (int r = 0; r < rounds; ++r) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const std::uint64_t page = (state >> 33) % kPages;
        if (!rig.engine().write(*file, page * P, record(P, page, t * rounds + r + 1)).is_ok()) ++failures;
      }
      if (!rig.engine().release(*file).is_ok()) ++failures;
    });
    threads.emplace_back([&, t] {  // readers of the shared file, several pages at a time
      auto file = rig.engine().open_file("shared");
      if (!file.is_ok()) return static_cast<void>(++failures);
      std::uint64_t state = 0x1234567ULL * (t + 3);
      std::vector<std::uint8_t> buffer(3 * P);
      for (int r = 0; r < rounds; ++r) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const std::uint64_t page = (state >> 33) % (kPages - 2);
        auto got = rig.engine().read(*file, page * P, buffer);
        if (!got.is_ok() || *got != buffer.size()) {
          ++failures;
          continue;
        }
        for (std::uint64_t i = 0; i < 3; ++i) {
          const std::vector<std::uint8_t> one(buffer.begin() + i * P, buffer.begin() + (i + 1) * P);
          if (!is_record_of(one, page + i)) ++failures;
        }
      }
      if (!rig.engine().release(*file).is_ok()) ++failures;
    });
    threads.emplace_back([&, t] {  // a private file read whole, over and over: evictions
      const std::string name = "own" + std::to_string(t);
      const auto expected = pattern(30 + t, kPages * P);
      std::vector<std::uint8_t> buffer(expected.size());
      for (int r = 0; r < std::max(1, rounds / 40); ++r) {
        // No Catch assertions off the main thread: Catch2 v2 is not thread-safe.
        auto file = rig.engine().open_file(name);
        if (!file.is_ok()) return static_cast<void>(++failures);
        auto got = rig.engine().read(*file, 0, buffer);
        if (!got.is_ok() || buffer != expected) ++failures;
        if (!rig.engine().release(*file).is_ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  const auto stats = rig.engine().stats();
  CHECK(stats.cached_pages <= stats.capacity_pages);
  CHECK(stats.evicted_pages > 0);
  // The backing file holds whole records too.
  const auto final_bytes = rig.get("shared");
  REQUIRE(final_bytes.size() == initial.size());
  for (std::uint64_t p = 0; p < kPages; ++p)
    CHECK(is_record_of({final_bytes.begin() + p * P, final_bytes.begin() + (p + 1) * P}, p));
}
