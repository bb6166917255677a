// fsck -y must end in a clean fsck -n (issue 18 §3), and fsck and damaged dirty data (§2): a
// cache the engine used (clean pages of four files, fsync'd write-back pages of two, then a
// power cut) has one part damaged; fsck -n names it and what to run, fsck -y repairs it or
// empties the cache of what cannot be proven (clean pages dropped, dirty pages saved in
// lost+found), fsck -n is then clean, and MountedCache (the daemon's open) opens the cache and
// serves every file's backing bytes.
#include <fcntl.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "flashdir/cache/backing_store.h"
#include "flashdir/cache/engine.h"
#include "flashdir/cache_dir.h"
#include "flashdir/catalog.h"
#include "flashdir/file_io.h"
#include "tools/cache_chip.h"
#include "tools/cache_dir_engine.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

constexpr std::uint64_t kPage = 4096;
constexpr int kFiles = 4;
constexpr std::uint64_t kCachedPages = kFiles * 41;

// The pages the write-back session rewrites: page 0 of f0, pages 2 and 3 of f1.
const std::vector<std::uint8_t> kNewF0(kPage, 0x5A);
const std::vector<std::uint8_t> kNewF1(2 * kPage, 0xA5);

std::vector<std::uint8_t> with(std::vector<std::uint8_t> bytes, std::uint64_t offset, const std::vector<std::uint8_t>& news) {
  std::copy(news.begin(), news.end(), bytes.begin() + static_cast<std::ptrdiff_t>(offset));
  return bytes;
}

// Every file cached clean, then two written back to the cache only, and the power cut.
void use(const CacheDir& cache) {
  fill(cache, kFiles);
  cache::EngineOptions write_back;
  write_back.write_mode = cache::WriteMode::write_back;
  DirEngine engine(cache, write_back);
  engine.write_synced("f0", 0, kNewF0);
  engine.write_synced("f1", 2 * kPage, kNewF1);
}

std::uint64_t file_id(const CacheDir& cache, const std::string& name) {
  auto catalog = Catalog::open(CacheDirPaths(cache.dir()).catalog, Catalog::Access::read_only);
  REQUIRE(catalog.is_ok());
  auto file = (*catalog)->find_by_path(name);
  REQUIRE(file.is_ok());
  return file->file_id;
}

// The daemon's open of the cache (MountedCache): it opens, loses nothing at its restart, and
// serves every file's backing bytes (as the restart left them), which are `expected` unless it
// is empty. Returns the restart's report.
cache::RestartReport daemon_serves(const CacheDir& cache, int files,
                                   const std::vector<std::vector<std::uint8_t>>& expected) {
  auto mounted = open_as_daemon(cache);
  cache::Engine& engine = mounted->engine();
  const cache::RestartReport restart = engine.stats().restart;
  INFO(restart.lost_dirty_reason);
  CHECK(restart.lost_dirty_slots == 0);
  CHECK(restart.catalog_lost_files == 0);
  CHECK(restart.saved_dirty_slots == 0);
  for (int i = 0; i < files; ++i) {
    const std::string name = CacheDir::name(i);
    auto handle = engine.open_file(name);
    REQUIRE(handle.is_ok());
    std::vector<std::uint8_t> bytes(kFileBytes + kPage);
    auto got = engine.read(*handle, 0, bytes);
    REQUIRE(got.is_ok());
    bytes.resize(*got);
    REQUIRE(engine.release(*handle).is_ok());
    INFO(name);
    CHECK((bytes == cache.get(name)));
    if (!expected.empty()) CHECK((bytes == expected[static_cast<std::size_t>(i)]));
  }
  CHECK(engine.stats().corrupt_pages == 0);
  REQUIRE(mounted->close().is_ok());
  return restart;
}

// The backing files once the dirty pages went back.
std::vector<std::vector<std::uint8_t>> written_back() {
  return {with(contents(0), 0, kNewF0), with(contents(1), 2 * kPage, kNewF1), contents(2), contents(3)};
}

// The backing files as they were: the dirty pages never went back.
std::vector<std::vector<std::uint8_t>> as_before() { return {contents(0), contents(1), contents(2), contents(3)}; }

// A cache repaired with nothing lost: the daemon keeps every page and writes the dirty ones back.
void nothing_lost(const CacheDir& cache) {
  const cache::RestartReport restart = daemon_serves(cache, kFiles, written_back());
  CHECK(restart.usable_slots == kCachedPages);
  CHECK(restart.written_back_slots == 3);
}

// A cache emptied of what could not be proven: no page served from the cache, the dirty pages
// of f0 (file `f0_id`) and f1 (`f1_id`) in lost+found at their offsets, the backing files as they were.
void emptied(const CacheDir& cache, std::uint64_t f0_id, std::uint64_t f1_id) {
  const cache::RestartReport restart = daemon_serves(cache, kFiles, as_before());
  CHECK(restart.usable_slots == 0);
  CHECK(restart.written_back_slots == 0);
  const auto lost_found = cache.dir() / kLostFoundDirName;
  const std::string f0 = file_bytes(lost_found / fmt::format("{}-record-lost", f0_id));
  const std::string f1 = file_bytes(lost_found / fmt::format("{}-record-lost", f1_id));
  CHECK(f0 == std::string(kNewF0.begin(), kNewF0.end()));
  REQUIRE(f1.size() == 4 * kPage);
  CHECK(f1.substr(2 * kPage) == std::string(kNewF1.begin(), kNewF1.end()));
  CHECK(std::filesystem::exists(lost_found / fmt::format("{}-record-lost.txt", f0_id)));
}

// -n names the damage and says what to run, -y repairs it, -n is then clean.
std::string check_repair_check(const CacheDir& cache, const std::string& finding) {
  const auto found = checked("-n " + cache.arg(), 4);
  CHECK_THAT(found.output, Catch::Contains(finding) && Catch::Contains("fsck -y"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  const auto again = checked("-n " + cache.arg(), 0);
  CHECK_THAT(again.output, !Catch::Contains("error:"));
  return repaired.output;
}

format::Superblock superblock_of(const CacheDir& cache) {
  auto file = read_superblock_file(CacheDirPaths(cache.dir()).superblock);
  REQUIRE(file.is_ok());
  return file->superblock;
}

void write_at(const std::filesystem::path& path, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY));
  REQUIRE(fd.valid());
  REQUIRE(pwrite_all(fd.get(), bytes, offset, "test").is_ok());
}

// The block table entry of `block`, as bytes at its offset in the image.
std::uint64_t table_entry_offset(const CacheDir& cache, std::uint64_t block) {
  return format::image_layout(superblock_of(cache).geometry).block_table_offset + block * format::kBlockTableEntrySize;
}

// The highest block holding programmed pages.
std::uint64_t last_programmed_block(const CacheDir& cache) {
  CacheChip chip(cache.dir());
  for (std::uint64_t b = chip.chip.geometry().block_count; b-- > 0;)
    if (chip.chip.next_page(BlockNumber(b)) > 0) return b;
  FAIL("nothing programmed");
  return 0;
}

// The chip pages whose data is one of the rewritten pages: the dirty pages (and any older
// copy of them).
std::vector<std::uint64_t> pages_holding_new_bytes(const CacheDir& cache) {
  const CacheDirPaths paths(cache.dir());
  const Geometry g = superblock_of(cache).geometry;
  const std::uint64_t data_offset = format::image_layout(g).data_offset;
  CacheChip chip(cache.dir());
  UniqueFd fd(::open(paths.image.c_str(), O_RDONLY));
  REQUIRE(fd.valid());
  std::vector<std::uint64_t> pages;
  std::vector<std::uint8_t> data(g.page_size_bytes);
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    for (std::uint32_t i = 0; i < chip.chip.next_page(BlockNumber(b)); ++i) {
      const std::uint64_t page = g.page_at(BlockNumber(b), i).value;
      REQUIRE(pread_exact(fd.get(), data, data_offset + page * g.page_size_bytes, "test").is_ok());
      if (std::all_of(data.begin(), data.end(), [](std::uint8_t c) { return c == 0x5A; }) ||
          std::all_of(data.begin(), data.end(), [](std::uint8_t c) { return c == 0xA5; }))
        pages.push_back(page);
    }
  }
  return pages;
}

}  // namespace

TEST_CASE("fsck -y rebuilds a superblock damaged in both slots from the catalog's copy; nothing is lost",
          "[tools][fsck-repair]") {
  CacheDir cache;
  use(cache);
  const format::Superblock before = superblock_of(cache);
  const auto superblock = CacheDirPaths(cache.dir()).superblock;
  flip_byte(superblock, 60);
  flip_byte(superblock, format::kSuperblockSlotSize + 60);
  const std::string repaired = check_repair_check(cache, "no valid superblock");
  CHECK_THAT(repaired, Catch::Contains("rebuilt it from the catalog's copy"));
  const format::Superblock after = superblock_of(cache);
  CHECK(after.uuid == before.uuid);
  CHECK(after.geometry == before.geometry);
  CHECK(after.overprovision_permille == before.overprovision_permille);
  nothing_lost(cache);
}

TEST_CASE("fsck -y rebuilds a superblock damaged in both slots from the image header when the catalog is gone too",
          "[tools][fsck-repair]") {
  CacheDir cache(kFiles, "--op 20");
  use(cache);
  const std::uint64_t f0 = file_id(cache, "f0");
  const std::uint64_t f1 = file_id(cache, "f1");
  const format::Superblock before = superblock_of(cache);
  const CacheDirPaths paths(cache.dir());
  flip_byte(paths.superblock, 60);
  flip_byte(paths.superblock, format::kSuperblockSlotSize + 60);
  std::filesystem::remove_all(paths.catalog);
  const std::string repaired = check_repair_check(cache, "fsck -y rebuilds it from the image header and the FTL checkpoint");
  CHECK_THAT(repaired, Catch::Contains("over-provisioning 200 per mille") &&
                           Catch::Contains("created an empty catalog bound to this cache"));
  const format::Superblock after = superblock_of(cache);
  CHECK(after.uuid == before.uuid);
  CHECK(after.geometry == before.geometry);
  CHECK(after.overprovision_permille == 200);
  emptied(cache, f0, f1);
}

TEST_CASE("fsck -y rewrites a damaged image header from the superblock; nothing is lost", "[tools][fsck-repair]") {
  CacheDir cache;
  use(cache);
  flip_byte(CacheDirPaths(cache.dir()).image, 30);  // inside the uuid: the checksum fails
  const std::string repaired = check_repair_check(cache, "image header checksum mismatch");
  CHECK_THAT(repaired, Catch::Contains("rewrites it from the superblock"));
  nothing_lost(cache);
}

TEST_CASE("fsck -y rebuilds a damaged block table from the OOB records; nothing is lost", "[tools][fsck-repair]") {
  CacheDir cache;
  use(cache);
  const auto image = CacheDirPaths(cache.dir()).image;
  SECTION("an entry claims more pages than a block has") {
    const std::uint64_t block = last_programmed_block(cache);
    write_at(image, table_entry_offset(cache, block) + 6, {0x01});  // next page += 65536
    const std::string repaired = check_repair_check(cache, fmt::format("block {} claims", block));
    CHECK_THAT(repaired, Catch::Contains("rebuilds 1 entries from the OOB records"));
  }
  SECTION("the whole table zeroed: every block claims nothing") {
    const Geometry g = superblock_of(cache).geometry;
    write_at(image, table_entry_offset(cache, 0), std::vector<std::uint8_t>(g.block_count * format::kBlockTableEntrySize, 0));
    const std::string repaired = check_repair_check(cache, "and its OOB area holds records up to page");
    CHECK_THAT(repaired, Catch::Contains("rebuilt the FTL mapping"));
  }
  nothing_lost(cache);
}

TEST_CASE("fsck -y cuts a grown image to its size; nothing is lost", "[tools][fsck-repair]") {
  CacheDir cache;
  use(cache);
  const auto image = CacheDirPaths(cache.dir()).image;
  std::filesystem::resize_file(image, std::filesystem::file_size(image) + (1 << 20));
  const std::string repaired = check_repair_check(cache, "fsck -y cuts it to");
  nothing_lost(cache);
}

TEST_CASE("fsck -y extends a truncated image; the pages cut off are lost, the dirty ones loudly",
          "[tools][fsck-repair]") {
  CacheDir cache;
  use(cache);
  const auto image = CacheDirPaths(cache.dir()).image;
  const Geometry g = superblock_of(cache).geometry;
  // Half of the last block the FTL wrote is cut off.
  const std::uint64_t block = last_programmed_block(cache);
  const std::uint64_t cut = format::image_layout(g).data_offset + (block * g.pages_per_block + 2) * g.page_size_bytes;
  std::filesystem::resize_file(image, cut);
  const std::string repaired = check_repair_check(cache, "the pages past byte");
  CHECK_THAT(repaired, Catch::Contains("extends it") && Catch::Contains("rebuilt the FTL mapping"));
  // Whatever the cut took, the daemon serves the backing files' bytes: the dirty pages that were
  // not cut off went back, and -y called each of the others LOST.
  const cache::RestartReport restart = daemon_serves(cache, kFiles, {});
  std::uint64_t lost = 0;
  for (std::size_t at = repaired.find("LOST: dirty page"); at != std::string::npos;
       at = repaired.find("LOST: dirty page", at + 1))
    ++lost;
  CHECK(restart.written_back_slots + lost == 3);
}

TEST_CASE("fsck -y replaces a catalog that is missing, damaged or another cache's, and empties the cache into "
          "lost+found",
          "[tools][fsck-repair]") {
  CacheDir cache;
  use(cache);
  const std::uint64_t f0 = file_id(cache, "f0");
  const std::uint64_t f1 = file_id(cache, "f1");
  const auto catalog = CacheDirPaths(cache.dir()).catalog;
  std::string finding;
  bool kept = true;
  SECTION("missing") {
    std::filesystem::remove_all(catalog);
    finding = "is missing";
    kept = false;
  }
  SECTION("its CURRENT file deleted") {
    std::filesystem::remove(catalog / "CURRENT");
    finding = "the catalog cannot be opened (opening catalog";
  }
  SECTION("a table file truncated") {
    std::filesystem::path largest;
    for (const auto& entry : std::filesystem::directory_iterator(catalog)) {
      if (entry.path().extension() == ".sst" &&
          (largest.empty() || entry.file_size() > std::filesystem::file_size(largest)))
        largest = entry.path();
    }
    REQUIRE_FALSE(largest.empty());
    std::filesystem::resize_file(largest, std::filesystem::file_size(largest) / 2);
    finding = "the catalog cannot be opened (opening catalog";
  }
  SECTION("another cache's") {
    TempDir other;
    REQUIRE(mkfs(quoted(other / "cache") + " --size 16M").exit_code == 0);
    std::filesystem::remove_all(catalog);
    std::filesystem::copy(other / "cache" / "catalog", catalog, std::filesystem::copy_options::recursive);
    finding = "the catalog belongs to another cache";
  }
  const std::string repaired = check_repair_check(cache, finding);
  CHECK_THAT(repaired, Catch::Contains("replaced it with an empty catalog") &&
                           Catch::Contains(fmt::format("as CACHE/lost+found/{}-record-lost", f0)) &&
                           Catch::Contains(fmt::format("as CACHE/lost+found/{}-record-lost", f1)));
  CHECK((repaired.find("kept the old catalog as CACHE/lost+found/catalog-") != std::string::npos) == kept);
  const auto listed = checked("-n " + cache.arg(), 0);
  CHECK_THAT(listed.output, Catch::Contains("lost+found holds dirty pages"));
  emptied(cache, f0, f1);
}

TEST_CASE("fsck: damaged dirty pages are errors naming the file and page; -y says they are LOST and drops them",
          "[tools][fsck-repair]") {
  // Issue 18 §2: with every dirty page flipped, fsck -n exited 0 with only "note: LPN n is lost".
  CacheDir cache;
  use(cache);
  const std::vector<std::uint64_t> dirty = pages_holding_new_bytes(cache);
  REQUIRE(dirty.size() >= 3);
  // Their data, not their OOB records: a damaged record among the last pages of a block is what
  // a torn program leaves (doc/fsck.md, "Damaged dirty pages").
  for (std::uint64_t page : dirty) flip_data_byte(cache, page);
  const auto found = checked("-n " + cache.arg(), 4);
  CHECK_THAT(found.output, Catch::Contains("error: dirty page 0 of f0 (file id") &&
                               Catch::Contains("error: dirty page 2 of f1 (file id") &&
                               Catch::Contains("error: dirty page 3 of f1 (file id") && Catch::Contains("LOST") &&
                               Catch::Contains("3 dirty pages damaged"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output, Catch::Contains("LOST: dirty page 0 of f0") && Catch::Contains("LOST: dirty page 3 of f1"));
  const auto again = checked("-n " + cache.arg(), 0);
  CHECK_THAT(again.output, Catch::Contains("0 dirty pages damaged") && Catch::Contains("(0 dirty in 0 files)"));
  const cache::RestartReport restart = daemon_serves(cache, kFiles, as_before());
  CHECK(restart.written_back_slots == 0);
  CHECK(restart.usable_slots == kCachedPages - 3);
}

TEST_CASE("fsck: a catalog that lost records (its write-ahead log deleted) is an error; -y drops their clean pages "
          "and saves their dirty ones",
          "[tools][fsck-repair]") {
  CacheDir cache(6);
  fill(cache, 4);
  // The catalog's next open moves its log into a table; the records of f4 and f5 go to a new
  // log only, which is then deleted. Their pages (committed, and one of f5 dirty) are on the chip.
  {
    cache::EngineOptions write_back;
    write_back.write_mode = cache::WriteMode::write_back;
    DirEngine engine(cache, write_back);
    REQUIRE(engine.read("f4") == contents(4));
    REQUIRE(engine.read("f5") == contents(5));
    engine.write_synced("f5", 0, kNewF0);
    REQUIRE(engine.engine().commit().is_ok());
  }
  const std::uint64_t f5 = file_id(cache, "f5");
  const auto catalog = CacheDirPaths(cache.dir()).catalog;
  for (const auto& entry : std::filesystem::directory_iterator(catalog))
    if (entry.path().extension() == ".log") std::filesystem::remove(entry.path());
  const auto found = checked("-n " + cache.arg(), 4);
  CHECK_THAT(found.output, Catch::Contains("error: the catalog lost the records of 2 files") &&
                               Catch::Contains("81 clean pages and 1 dirty pages of 2 files"));
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output,
             Catch::Contains(fmt::format("saved 1 dirty pages of file {} as CACHE/lost+found/{}-record-lost", f5, f5)) &&
                 Catch::Contains("moved the catalog's next file id to"));
  const auto again = checked("-n " + cache.arg(), 0);
  CHECK_THAT(again.output, Catch::Contains("0 slots of 0 files whose records the catalog lost"));
  CHECK(file_bytes(cache.dir() / kLostFoundDirName / fmt::format("{}-record-lost", f5)) ==
        std::string(kNewF0.begin(), kNewF0.end()));
  // f4 and f5 took free slots (the cache had room: nothing was evicted); their records lost,
  // their pages were dropped, and f0 to f3 are what is left cached.
  std::vector<std::vector<std::uint8_t>> expected;
  for (int i = 0; i < 6; ++i) expected.push_back(contents(i));
  const cache::RestartReport restart = daemon_serves(cache, 6, expected);
  CHECK(restart.usable_slots == 4 * 41);
}
