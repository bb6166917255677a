// The restart image (doc/cache.md "The restart image"): a clean restart from the image a clean
// close leaves keeps exactly what a restart from every metadata page keeps, and an image whose
// tables do not add up is refused (the open then reads the metadata pages).
#include <catch2/catch.hpp>

#include "engine_rig.h"
#include "flashdir/endian.h"
#include "flashdir/random.h"

using flashdir::LittleEndianReader;
using flashdir::SeededRandom;
using flashdir::cache::EngineOptions;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

constexpr int kFiles = 6;

std::string name_of(int f) { return "f" + std::to_string(f); }

// Files of a fifth to seven tenths of the cache, read in random pieces (more than the cache holds, so that CLOCK
// evicts and file numbers are freed and reused) and partly rewritten, always the same way.
std::vector<std::vector<std::uint8_t>> churn(EngineRig& rig) {
  const std::uint32_t P = rig.page_size();
  std::vector<std::vector<std::uint8_t>> files;
  const std::uint64_t capacity = rig.engine().stats().capacity_pages;
  for (int f = 0; f < kFiles; ++f) {
    files.push_back(pattern(100 + f, (2 + f) * capacity / 10 * P + 77));  // 2.7 times the cache in all
    rig.put(name_of(f), files.back());
  }
  SeededRandom random(7);
  for (int step = 0; step < 300; ++step) {
    const int f = static_cast<int>(random.uniform(kFiles));
    const auto& bytes = files[f];
    const std::uint64_t offset = random.uniform(bytes.size());
    const std::size_t length = random.between(1, 6 * P);
    if (random.one_in(5)) {
      auto file = rig.engine().open_file(name_of(f));
      REQUIRE(file.is_ok());
      const auto update = pattern(1000 + step, std::min<std::size_t>(length, bytes.size() - offset));
      REQUIRE(rig.engine().write(*file, offset, update).is_ok());
      std::copy(update.begin(), update.end(), files[f].begin() + static_cast<std::ptrdiff_t>(offset));
      REQUIRE(rig.engine().release(*file).is_ok());
    } else {
      const std::size_t end = std::min<std::size_t>(bytes.size(), offset + length);
      REQUIRE(rig.read_through(name_of(f), offset, length) ==
              std::vector<std::uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                                        bytes.begin() + static_cast<std::ptrdiff_t>(end)));
    }
  }
  return files;
}

// Reads every file whole; returns how many pages hit.
std::uint64_t read_all_hits(EngineRig& rig, const std::vector<std::vector<std::uint8_t>>& files) {
  const std::uint64_t before = rig.engine().stats().read_hit_pages;
  for (int f = 0; f < kFiles; ++f) CHECK(rig.read_through(name_of(f), 0, files[f].size() + 10) == files[f]);
  return rig.engine().stats().read_hit_pages - before;
}

// The offsets in a restart image body (doc/format.md "Restart image") of the first bucket
// holding a slot in each of the first two files' page tables.
std::pair<std::size_t, std::size_t> first_buckets_of_two_files(const std::vector<std::uint8_t>& body) {
  LittleEndianReader in(body);
  in.skip(8);
  const std::uint32_t slots = in.u32();
  in.skip(12 + 8);  // the rest of the layout, the store's sequence
  const std::uint32_t numbers = in.u32();
  in.skip(8 * std::size_t{numbers} + 12 * std::size_t{slots} + 4 + slots);
  const std::uint32_t files = in.u32();
  REQUIRE(files >= 2);
  std::vector<std::size_t> found;
  for (std::uint32_t f = 0; f < 2; ++f) {
    in.skip(8 + 4 + 4);
    const std::uint64_t buckets = in.u64();
    std::size_t first = 0;
    for (std::uint64_t b = 0; b < buckets; ++b) {
      const std::size_t at = in.offset();
      if (in.u32() != UINT32_MAX && first == 0) first = at;
    }
    found.push_back(first);
  }
  return {found[0], found[1]};
}

}  // namespace

TEST_CASE("a clean restart from the restart image keeps exactly what the metadata pages keep") {
  const WriteMode mode = GENERATE(WriteMode::write_through, WriteMode::write_around);
  INFO("write mode " << static_cast<int>(mode));
  EngineOptions options;
  options.write_mode = mode;
  // Two caches through the same history: one restarts from the image, one from the metadata pages.
  EngineRig from_image(options), from_pages(options);
  const auto files = churn(from_image);
  REQUIRE(churn(from_pages) == files);
  REQUIRE(from_image.engine().stats().evicted_pages > 0);

  auto taken = from_image.restart_from_image();
  REQUIRE(taken.is_ok());
  CHECK(*taken);
  REQUIRE(from_pages.restart().is_ok());
  const auto image_restart = from_image.engine().stats().restart;
  const auto pages_restart = from_pages.engine().stats().restart;
  CHECK(image_restart.from_restart_image);
  CHECK_FALSE(pages_restart.from_restart_image);
  CHECK(image_restart.clean_shutdown);
  CHECK(image_restart.usable_slots == pages_restart.usable_slots);
  CHECK(from_image.engine().stats().cached_pages == from_pages.engine().stats().cached_pages);
  // The same pages hit, and every byte is right.
  CHECK(read_all_hits(from_image, files) == read_all_hits(from_pages, files));

  // And the cache goes on from there: more churn, a cut, a recovery from the metadata pages.
  churn(from_image);
  REQUIRE(from_image.power_cycle().is_ok());
  CHECK_FALSE(from_image.engine().stats().restart.from_restart_image);
  read_all_hits(from_image, files);
}

TEST_CASE("a write-back cache restarts from the restart image after its close wrote everything back") {
  EngineRig rig(flashdir::testing::write_back_options());
  const auto files = churn(rig);
  auto taken = rig.restart_from_image();
  INFO(taken.status().to_string());
  REQUIRE(taken.is_ok());
  CHECK(*taken);
  for (int f = 0; f < kFiles; ++f) CHECK(rig.get(name_of(f)) == files[f]);
  CHECK(read_all_hits(rig, files) > 0);
}

TEST_CASE("a restart image whose tables do not add up is refused, and the metadata pages are read") {
  EngineRig rig;
  const auto files = churn(rig);
  const std::uint64_t cached = rig.engine().stats().cached_pages;
  SECTION("two files' page tables each hold a slot of the other") {
    auto taken = rig.restart_from_image([](std::vector<std::uint8_t>& body) {
      const auto [a, b] = first_buckets_of_two_files(body);
      REQUIRE(a != 0);
      REQUIRE(b != 0);
      for (std::size_t i = 0; i < 4; ++i) std::swap(body[a + i], body[b + i]);
    });
    REQUIRE(taken.is_ok());
    CHECK_FALSE(*taken);
  }
  SECTION("cut short") {
    auto taken = rig.restart_from_image([](std::vector<std::uint8_t>& body) { body.resize(body.size() - 3); });
    REQUIRE(taken.is_ok());
    CHECK_FALSE(*taken);
  }
  SECTION("another slot layout") {
    auto taken = rig.restart_from_image([](std::vector<std::uint8_t>& body) { body[8] ^= 1; });
    REQUIRE(taken.is_ok());
    CHECK_FALSE(*taken);
  }
  CHECK(rig.engine().stats().restart.usable_slots == cached);
  read_all_hits(rig, files);
}
