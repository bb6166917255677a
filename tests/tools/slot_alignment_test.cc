// Where the data slots start (doc/cache.md "Slots and replacement"): a new cache starts them at
// a logical-block boundary, so that CFTL can block-map a file cached into consecutive slots; a
// cache formatted before the superblock recorded the choice (its byte 87 is 0) keeps its packed
// layout through opens, a power cut, fsck and the restart (MountedCache's, as the daemon opens it)
// that writes its dirty pages back.
#include <catch2/catch.hpp>

#include "cache/meta/metadata_store.h"
#include "flashdir/cache/backing_store.h"
#include "flashdir/cache/engine.h"
#include "flashdir/cache_dir.h"
#include "flashdir/catalog.h"
#include "tools/cache_chip.h"
#include "tools/cache_dir_engine.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// What every flashdir before the field wrote in the superblock: 0.
void make_formatted_before_alignment(const CacheDir& cache) {
  const CacheDirPaths paths(cache.dir());
  auto file = read_superblock_file(paths.superblock);
  REQUIRE(file.is_ok());
  format::Superblock superblock = file->superblock;
  superblock.slot_alignment = format::SlotAlignment::after_metadata;
  REQUIRE(update_superblock_file(paths.superblock, superblock).is_ok());
}

format::SlotAlignment recorded_alignment(const CacheDir& cache) {
  auto file = read_superblock_file(CacheDirPaths(cache.dir()).superblock);
  REQUIRE(file.is_ok());
  return file->superblock.slot_alignment;
}

// The first page of f0 through the engine (cached in slot 0: the CLOCK hand starts there), then
// the LPN that holds it, read from the FTL.
std::vector<std::uint8_t> page_at(DirEngine& engine, Lpn lpn) {
  std::vector<std::uint8_t> bytes(engine.ftl().page_size_bytes());
  REQUIRE(engine.ftl().read(lpn, 1, bytes).is_ok());
  return bytes;
}

std::vector<std::uint8_t> first_page(const std::vector<std::uint8_t>& file) { return {file.begin(), file.begin() + 4096}; }

}  // namespace

TEST_CASE("a new cache's first data slot begins a logical block", "[tools][slot-alignment]") {
  CacheDir cache(1);
  CHECK(recorded_alignment(cache) == format::SlotAlignment::logical_block);
  fill(cache, 1);
  DirEngine engine(cache);
  const std::uint32_t P = engine.ftl().pages_per_block();
  auto layout = cache::SlotLayout::of(engine.ftl(), format::SlotAlignment::logical_block);
  REQUIRE(layout.is_ok());
  REQUIRE(layout->metadata_pages % P != 0);  // else packed and aligned are the same layout
  CHECK(layout->first_data_lpn % P == 0);
  CHECK(layout->first_data_lpn > layout->metadata_pages);
  CHECK(page_at(engine, layout->data_lpn(0)) == first_page(contents(0)));
  CHECK(page_at(engine, Lpn(layout->metadata_pages)) == std::vector<std::uint8_t>(4096, 0));  // the gap: never written
  engine.close();
}

TEST_CASE("a cache formatted before the slot alignment keeps its layout: it opens, restarts after a cut, and fsck "
          "finds it clean",
          "[tools][slot-alignment]") {
  CacheDir cache(2);
  make_formatted_before_alignment(cache);
  fill(cache, 2);
  cache::SlotLayout packed;
  {
    DirEngine engine(cache);
    auto layout = cache::SlotLayout::of(engine.ftl(), format::SlotAlignment::after_metadata);
    REQUIRE(layout.is_ok());
    packed = *layout;
    CHECK(packed.first_data_lpn == packed.metadata_pages);
    CHECK(page_at(engine, packed.data_lpn(0)) == first_page(contents(0)));
    engine.close();
  }
  CHECK_THAT(checked("-n " + cache.arg(), 0).output, Catch::Contains("result: clean"));

  // Dirty pages in the cache only, then the power goes: the restart must find them where the
  // old layout put them, and write them back to their files.
  cache::EngineOptions write_back;
  write_back.write_mode = cache::WriteMode::write_back;
  const std::vector<std::uint8_t> news(4096, 0x5A);
  DirEngine(cache, write_back).write_synced("f1", 4096, news);
  checked("-y " + cache.arg(), 0);
  {
    // As the daemon opens it: the layout must come from the superblock.
    auto mounted = open_as_daemon(cache);
    cache::Engine& engine = mounted->engine();
    CHECK(engine.stats().restart.written_back_slots == 1);
    auto f0 = engine.open_file("f0");
    REQUIRE(f0.is_ok());
    std::vector<std::uint8_t> bytes(kFileBytes);
    auto got = engine.read(*f0, 0, bytes);
    REQUIRE(got.is_ok());
    CHECK(bytes == contents(0));
    CHECK(engine.stats().read_hit_pages == kFileBytes / 4096 + 1);  // served from the slots, not from the backing file
    REQUIRE(engine.release(*f0).is_ok());
    REQUIRE(mounted->close().is_ok());
  }
  const auto f1 = cache.get("f1");
  REQUIRE(f1.size() == kFileBytes);
  CHECK(std::equal(news.begin(), news.end(), f1.begin() + 4096));
  CHECK(recorded_alignment(cache) == format::SlotAlignment::after_metadata);  // nobody rewrote the choice
  CHECK_THAT(checked("-n " + cache.arg(), 0).output, Catch::Contains("result: clean"));
}

TEST_CASE("a superblock fsck rebuilds from the image header takes the slot alignment the chip shows",
          "[tools][slot-alignment]") {
  const bool formatted_before = GENERATE(false, true);
  INFO((formatted_before ? "formatted before the alignment" : "formatted now"));
  CacheDir cache(2);
  if (formatted_before) make_formatted_before_alignment(cache);
  fill(cache, 2);
  const CacheDirPaths paths(cache.dir());
  {
    // The catalog stays, with its files, but its copy of the superblock is of no use.
    auto catalog = Catalog::open(paths.catalog, Catalog::Access::read_write);
    REQUIRE(catalog.is_ok());
    auto copy = (*catalog)->superblock_copy();
    REQUIRE(copy.is_ok());
    format::Superblock other = *copy;
    ++other.geometry.block_count;
    REQUIRE((*catalog)->put_superblock_copy(other).is_ok());
  }
  flip_byte(paths.superblock, 60);
  flip_byte(paths.superblock, format::kSuperblockSlotSize + 60);
  const auto repaired = checked("-y " + cache.arg(), 1);
  CHECK_THAT(repaired.output, Catch::Contains("from the image header") &&
                                  Catch::Contains(formatted_before ? "data slots right after the metadata pages"
                                                                   : "data slots from a logical-block boundary"));
  CHECK(recorded_alignment(cache) ==
        (formatted_before ? format::SlotAlignment::after_metadata : format::SlotAlignment::logical_block));
  DirEngine engine(cache);
  for (int i = 0; i < 2; ++i) CHECK(engine.read(CacheDir::name(i)) == contents(i));
  CHECK(engine.engine().stats().read_hit_pages == 2 * (kFileBytes / 4096 + 1));  // from the slots
  engine.close();
}
