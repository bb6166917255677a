// fsck.flashdir's cache checks (doc/fsck.md), run as the real binary over a cache directory
// that the engine filled through a backing directory: a clean cache, a damaged metadata page, a
// window of a bad length, orphans, entries a power cut leaves unusable, dirty slots; -y, then
// -n clean, then the engine opens the repaired cache with nothing to drop and serves the
// backing files' bytes.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>

#include "flashdir/cache/engine.h"
#include "flashdir/cache_dir.h"
#include "flashdir/catalog.h"
#include "tools/cache_dir_engine.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// After a repair: the engine opens with nothing to drop and serves every file's backing bytes.
void engine_serves(const CacheDir& cache, int files, std::uint64_t expected_usable_slots) {
  DirEngine engine(cache);
  const cache::RestartReport restart = engine.engine().stats().restart;
  CHECK(restart.clean_shutdown);
  CHECK(restart.dropped_slots == 0);
  CHECK(restart.orphan_slots == 0);
  CHECK(restart.usable_slots == expected_usable_slots);
  for (int i = 0; i < files; ++i) CHECK(engine.read(CacheDir::name(i)) == cache.get(CacheDir::name(i)));
  CHECK(engine.engine().stats().corrupt_pages == 0);
  engine.close();
}

// Writes `bytes` as metadata page `page` through the FTL (a page the codec refuses, with a
// sound OOB record: what a firmware bug or a misdirected write leaves) and closes cleanly.
void write_metadata_page(const CacheDir& cache, std::uint32_t page, const std::vector<std::uint8_t>& bytes) {
  DirEngine engine(cache);
  engine.close_engine();  // its clean mark goes to metadata page 0 last: the bad page goes after it
  REQUIRE(engine.ftl().write(Lpn(page), 1, bytes, WriteHint::hot, Durability::forced).is_ok());
  engine.close_ftl();
}

std::vector<std::uint8_t> read_metadata_page(const CacheDir& cache, std::uint32_t page) {
  DirEngine engine(cache);
  std::vector<std::uint8_t> bytes(engine.ftl().page_size_bytes());
  REQUIRE(engine.ftl().read(Lpn(page), 1, bytes).is_ok());
  engine.close();
  return bytes;
}

// The checksum over the page with its checksum field (offset 16) zeroed, as the codec computes it.
void reseal(std::vector<std::uint8_t>& page) {
  std::fill_n(page.begin() + 16, 8, 0);
  const std::uint64_t sum = format::xxh3(page);
  for (int i = 0; i < 8; ++i) page[16 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(sum >> (8 * i));
}

std::string repeat_check(const CacheDir& cache) {
  const auto again = checked("-n " + cache.arg(), 0);
  CHECK_THAT(again.output, Catch::Contains("(0 damaged)") && Catch::Contains("clean mark") &&
                               Catch::Contains("0 dropped by the usability rule") && Catch::Contains("0 orphans"));
  return again.output;
}

}  // namespace

TEST_CASE("fsck checks the slot metadata of a clean cache", "[tools][fsck-cache]") {
  CacheDir cache;
  fill(cache, 4);
  const std::uint64_t pages = cached_pages(cache);
  REQUIRE(pages == 4 * 41);
  const auto report = checked("-n " + cache.arg(), 0);
  CHECK_THAT(report.output, Catch::Contains("metadata  lufuw") && Catch::Contains("(0 damaged)") &&
                                Catch::Contains("clean mark") &&
                                Catch::Contains(fmt::format("slots     {} usable (0 dirty in 0 files)", pages)) &&
                                Catch::Contains("0 orphans (0 dirty)") && Catch::Contains("result: clean"));
  // Nothing to repair: -y changes nothing and says so.
  const auto repaired = checked("-y " + cache.arg(), 0);
  CHECK_THAT(repaired.output, !Catch::Contains("repaired:"));
  engine_serves(cache, 4, pages);
}

TEST_CASE("fsck: a metadata page failing its checksum is an error; -y drops its slots", "[tools][fsck-cache]") {
  CacheDir cache;
  fill(cache, 4);
  const std::uint64_t pages = cached_pages(cache);
  auto page = read_metadata_page(cache, 0);
  page[304 + 3] ^= 0x20;  // inside the first entry: the XXH3 no longer matches
  write_metadata_page(cache, 0, page);

  const auto found = checked("-n " + cache.arg(), 4);
  CHECK_THAT(found.output, Catch::Contains("error: metadata page checksum mismatch (metadata page 0, slots 0-236)") &&
                               Catch::Contains("(1 damaged)"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output, Catch::Contains("repaired: metadata page checksum mismatch") &&
                                  Catch::Contains("rewrote 1 damaged metadata pages"));
  repeat_check(cache);
  // Metadata page 0 held every cached page (fewer than 237): all gone, none served wrongly.
  engine_serves(cache, 4, pages > 237 ? pages - 237 : 0);
}

TEST_CASE("fsck: a metadata page damaged on the chip: the FTL's -y loses it, the cache's -y rewrites it",
          "[tools][fsck-cache]") {
  CacheDir cache;
  fill(cache, 2);
  flip_data_byte(cache, page_holding(cache, 0));
  const auto found = checked("-n " + cache.arg(), 4);
  CHECK_THAT(found.output, Catch::Contains("error: metadata page 0 (slots 0-236) cannot be read"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output, Catch::Contains("rebuilt the FTL mapping") &&
                                  Catch::Contains("rewrote 1 damaged metadata pages"));
  repeat_check(cache);
  engine_serves(cache, 2, 0);
}

TEST_CASE("fsck: a metadata page whose window holds more than 63 pages is an error", "[tools][fsck-cache]") {
  CacheDir cache;
  fill(cache, 2);
  auto page = read_metadata_page(cache, 0);
  page[46] = 64;  // window length, one past the format's 63; resealed, so only the count is wrong
  reseal(page);
  write_metadata_page(cache, 0, page);

  const auto found = checked("-n " + cache.arg(), 4);
  CHECK_THAT(found.output, Catch::Contains("error: metadata page window of 64 exceeds 63 (metadata page 0"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output, Catch::Contains("rewrote 1 damaged metadata pages"));
  repeat_check(cache);
  engine_serves(cache, 2, 0);
}

TEST_CASE("fsck: a window naming a page beyond the metadata pages is an error", "[tools][fsck-cache]") {
  CacheDir cache;
  fill(cache, 2);
  auto page = read_metadata_page(cache, 0);
  page[46] = 1;
  page[48] = 200;  // the cache has 12 metadata pages
  reseal(page);
  write_metadata_page(cache, 0, page);
  const auto found = checked("-n " + cache.arg(), 4);
  CHECK_THAT(found.output, Catch::Contains("metadata page window names page 200, beyond the cache's"));
  checked("-y " + cache.arg(), 1);
  repeat_check(cache);
}

TEST_CASE("fsck: slots of a file the catalog no longer knows are orphans; -y drops them", "[tools][fsck-cache]") {
  CacheDir cache;
  fill(cache, 3);
  const std::uint64_t pages = cached_pages(cache);
  {
    auto catalog = Catalog::open(CacheDirPaths(cache.dir()).catalog, Catalog::Access::read_write);
    REQUIRE(catalog.is_ok());
    auto f1 = (*catalog)->find_by_path("f1");
    REQUIRE(f1.is_ok());
    REQUIRE((*catalog)->remove_file(f1->file_id).is_ok());
  }
  // Clean orphans are what an unlink of an open file leaves; the engine drops them at open.
  const auto found = checked("-n " + cache.arg(), 0);
  CHECK_THAT(found.output, Catch::Contains(fmt::format("{} usable", pages - 41)) &&
                               Catch::Contains("41 orphans (0 dirty)") &&
                               Catch::Contains("note: 41 clean slots name files the catalog does not know"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output, Catch::Contains("repaired: dropped 41 slots: 41 orphans"));
  repeat_check(cache);
  engine_serves(cache, 3, pages - 41);
}

TEST_CASE("fsck: entries a power cut leaves unfinished are dropped by -y, as the engine's restart drops them",
          "[tools][fsck-cache]") {
  // No device RAM: each fill's data is on the chip when its write returns, so the entries of
  // earlier fills are finished (usable) and those of the last fills, still WRITING in a page of
  // the newest window, are not.
  CacheDir cache(4, "--ram 0");
  {
    DirEngine engine(cache);
    for (int i = 0; i < 4; ++i) CHECK(engine.read(CacheDir::name(i)) == cache.get(CacheDir::name(i)));
  }
  const CacheDirPaths paths(cache.dir());
  const std::string image_before = file_bytes(paths.image);
  const std::string superblock_before = file_bytes(paths.superblock);
  const auto found = checked("-n " + cache.arg(), 0);
  // -n ran the restart on an overlay: the cache is as it was.
  CHECK((file_bytes(paths.image) == image_before));
  CHECK((file_bytes(paths.superblock) == superblock_before));
  // The oracle: the engine's own restart, on a copy.
  cache::RestartReport restart;
  {
    DirEngine engine(cache.copy(), cache.backing());
    restart = engine.engine().stats().restart;
    engine.close();
  }
  REQUIRE_FALSE(restart.clean_shutdown);
  REQUIRE(restart.dropped_slots > 0);
  REQUIRE(restart.usable_slots > 0);
  CHECK_THAT(found.output,
             Catch::Contains("no clean mark") &&
                 Catch::Contains(fmt::format("slots     {} usable (0 dirty in 0 files), {} dropped by the usability rule",
                                             restart.usable_slots, restart.dropped_slots)) &&
                 Catch::Contains(fmt::format("note: {} slot entries fail the usability rule", restart.dropped_slots)) &&
                 Catch::Contains("the engine's next open drops them"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output,
             Catch::Contains(fmt::format("dropped {} slot entries the usability rule refuses", restart.dropped_slots)) &&
                 Catch::Contains("closed the cache metadata and the FTL cleanly"));
  const std::string again = repeat_check(cache);
  CHECK_THAT(again, Catch::Contains(fmt::format("slots     {} usable", restart.usable_slots)));
  engine_serves(cache, 4, restart.usable_slots);
}

TEST_CASE("fsck keeps dirty slots of catalog files and says loudly when dirty data has nowhere to go", "[tools][fsck-cache]") {
  CacheDir cache(2);
  cache::EngineOptions write_back;
  write_back.write_mode = cache::WriteMode::write_back;
  const std::vector<std::uint8_t> news(4096, 0x5A);
  {
    DirEngine engine(cache, write_back);
    for (const char* name : {"f0", "f1"}) {
      auto handle = engine.engine().open_file(name);
      REQUIRE(handle.is_ok());
      REQUIRE(engine.engine().write(*handle, 0, news).is_ok());
      REQUIRE(engine.engine().fsync(*handle).is_ok());
    }
    // The power goes with both files open and their first pages dirty in the cache only.
  }
  const auto found = checked("-n " + cache.arg(), 0);
  CHECK_THAT(found.output, Catch::Contains("(2 dirty in 2 files)") &&
                               Catch::Contains("2 dirty pages of 2 files") && Catch::Contains("they hold the only copy"));

  SECTION("with their files in the catalog, -y keeps them and the engine writes them back") {
    const auto kept = checked("-y " + cache.arg(), 0);
    CHECK_THAT(kept.output, !Catch::Contains("repaired:"));
    const auto again = checked("-n " + cache.arg(), 0);
    CHECK_THAT(again.output, Catch::Contains("(2 dirty in 2 files)"));
    {
      DirEngine engine(cache);
      CHECK(engine.engine().stats().restart.written_back_slots == 2);
      engine.close();
    }
    for (const char* name : {"f0", "f1"}) {
      const auto bytes = cache.get(name);
      REQUIRE(bytes.size() == kFileBytes);
      CHECK(std::equal(news.begin(), news.end(), bytes.begin()));
    }
  }
  SECTION("a backing file gone: an error -y cannot fix") {
    std::filesystem::remove(cache.backing() / "f1");
    const auto missing = checked("-n --backing " + quoted(cache.backing()) + " " + cache.arg(), 4);
    CHECK_THAT(missing.output, Catch::Contains("1 dirty pages of f1") && Catch::Contains("is gone") &&
                                   Catch::Contains("1 catalog files gone"));
    const auto repaired = checked("-y --backing " + quoted(cache.backing()) + " " + cache.arg(), 4);
    CHECK_THAT(repaired.output, Catch::Contains("1 dirty pages of f1"));
    // Without --backing, the directory the catalog records (the engine's first open wrote it).
    const auto recorded = checked("-n " + cache.arg(), 4);
    CHECK_THAT(recorded.output, Catch::Contains("1 catalog files gone") && Catch::Contains("1 dirty pages of f1"));
    // A backing directory named that is not there is an operational error, not every file gone.
    const auto unreachable = checked("-n --backing " + quoted(cache.dir() / "nowhere") + " " + cache.arg(), 8);
    CHECK_THAT(unreachable.output, Catch::Contains("nowhere does not exist") && !Catch::Contains("gone"));
  }
  SECTION("another file at a dirty file's path: an error; the engine keeps the pages in lost+found") {
    std::filesystem::remove(cache.backing() / "f1");
    cache.put("f1", contents(7));  // a new inode at the path
    const auto replaced = checked("-n " + cache.arg(), 4);
    CHECK_THAT(replaced.output, Catch::Contains("1 dirty pages of f1") && Catch::Contains("is now another file") &&
                                    Catch::Contains("lost+found"));
    {
      DirEngine engine(cache);
      CHECK(engine.engine().stats().restart.saved_dirty_slots == 1);
      CHECK(engine.engine().stats().restart.written_back_slots == 1);  // f0's
      engine.close();
    }
    CHECK(cache.get("f1") == contents(7));
    const auto listed = checked("-n " + cache.arg(), 0);
    CHECK_THAT(listed.output, Catch::Contains("lost+found holds dirty pages") && Catch::Contains("-uid0-f1"));
  }
  SECTION("a dirty orphan: an error; -y saves it in lost+found, as the engine's restart does") {
    std::uint64_t f1_id = 0;
    {
      auto catalog = Catalog::open(CacheDirPaths(cache.dir()).catalog, Catalog::Access::read_write);
      REQUIRE(catalog.is_ok());
      auto f1 = (*catalog)->find_by_path("f1");
      REQUIRE(f1.is_ok());
      f1_id = f1->file_id;
      REQUIRE((*catalog)->remove_file(f1->file_id).is_ok());
    }
    const auto orphan = checked("-n " + cache.arg(), 4);
    CHECK_THAT(orphan.output, Catch::Contains("error: 1 DIRTY slots name files the catalog does not know") &&
                                  Catch::Contains("fsck -y saves it in CACHE/lost+found"));
    const auto repaired = checked("-y " + cache.arg(), 1);
    const std::string saved = fmt::format("{}-record-lost", f1_id);
    CHECK_THAT(repaired.output, Catch::Contains("saved 1 dirty pages of file " + std::to_string(f1_id)) &&
                                    Catch::Contains("lost+found/" + saved));
    const std::string kept = file_bytes(cache.dir() / kLostFoundDirName / saved);
    REQUIRE(kept.size() == news.size());
    CHECK(std::equal(news.begin(), news.end(), kept.begin(), [](std::uint8_t a, char b) { return a == static_cast<std::uint8_t>(b); }));
    const auto again = checked("-n " + cache.arg(), 0);
    CHECK_THAT(again.output, Catch::Contains("(1 dirty in 1 files)") && Catch::Contains("0 orphans") &&
                                 Catch::Contains("clean mark") && Catch::Contains(saved));
    // Under the clean mark -y wrote, the engine still writes the kept dirty page back.
    {
      DirEngine engine(cache);
      CHECK(engine.engine().stats().restart.written_back_slots == 1);
      CHECK(engine.engine().stats().restart.lost_dirty_slots == 0);
      engine.close();
    }
    CHECK(std::equal(news.begin(), news.end(), cache.get("f0").begin()));
  }
}
