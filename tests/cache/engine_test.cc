#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "cache/meta/metadata_store.h"
#include "engine_rig.h"
#include "flashdir/file_io.h"
#include "flashdir/random.h"

using flashdir::cache::EngineOptions;
using flashdir::cache::FileHandle;
using flashdir::cache::MetadataScheme;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

std::vector<std::uint8_t> slice(const std::vector<std::uint8_t>& bytes, std::size_t from, std::size_t count) {
  return {bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.begin() + static_cast<std::ptrdiff_t>(from + count)};
}

}  // namespace

TEST_CASE("a read miss answers from the backing file and the next read of it hits") {
  EngineRig rig;
  const auto bytes = pattern(1, 20 * rig.page_size() + 100);
  rig.put("f", bytes);
  CHECK(rig.read_through("f", 0, bytes.size()) == bytes);
  const auto first = rig.engine().stats();
  CHECK(first.read_miss_pages == 21);
  CHECK(first.read_hit_pages == 0);
  CHECK(first.cached_pages == 21);

  // Unaligned reads inside, across pages and past the end.
  CHECK(rig.read_through("f", 700, 3000) == slice(bytes, 700, 3000));
  CHECK(rig.read_through("f", bytes.size() - 50, 4096) == slice(bytes, bytes.size() - 50, 50));
  CHECK(rig.read_through("f", bytes.size() + 10, 10).empty());
  const auto later = rig.engine().stats();
  CHECK(later.read_miss_pages == 21);
  CHECK(later.read_hit_pages > 0);
}

TEST_CASE("read-ahead admits the pages after a miss, up to the end of the file") {
  EngineOptions options;
  options.read_ahead_pages = 4;
  EngineRig rig(options);
  const auto bytes = pattern(2, 10 * rig.page_size());
  rig.put("f", bytes);
  CHECK(rig.read_through("f", 0, 10) == slice(bytes, 0, 10));
  CHECK(rig.engine().stats().cached_pages == 5);
  CHECK(rig.engine().stats().read_ahead_pages == 4);
  CHECK(rig.read_through("f", 8 * rig.page_size(), 2 * rig.page_size()) == slice(bytes, 8 * rig.page_size(), 2 * rig.page_size()));
  CHECK(rig.engine().stats().cached_pages == 7);  // pages 8 and 9: the file ends there
}

namespace {

// A rig with 4 pages of read-ahead, and `pages` pages of `seed`'s pattern in "f", opened.
struct ReadAheadFile {
  explicit ReadAheadFile(std::uint64_t seed, std::uint32_t pages) : rig(options()) {
    bytes = pattern(seed, std::size_t{pages} * rig.page_size());
    rig.put("f", bytes);
    auto opened = rig.engine().open_file("f");
    REQUIRE(opened.is_ok());
    file = *opened;
  }
  static EngineOptions options() {
    EngineOptions options;
    options.read_ahead_pages = 4;
    return options;
  }
  EngineRig rig;
  std::vector<std::uint8_t> bytes;
  FileHandle file{};
};

}  // namespace

TEST_CASE("a miss at the end of a read may leave its pages to admit after the reply") {
  ReadAheadFile f(3, 16);
  EngineRig& rig = f.rig;
  const std::uint32_t P = rig.page_size();
  const auto& bytes = f.bytes;
  const FileHandle file = f.file;
  std::vector<std::uint8_t> out(2 * P);
  flashdir::cache::DeferredFill later;
  REQUIRE(rig.engine().read(file, 0, out, &later).is_ok());
  CHECK(out == slice(bytes, 0, 2 * P));  // the bytes are there before the fill
  CHECK(rig.engine().stats().cached_pages == 0);

  // A write waits for the fill (the file's read lock), then replaces what it admitted.
  const std::vector<std::uint8_t> written(P, 0xab);
  std::atomic<bool> wrote{false};
  bool write_ok = false;  // Catch2's assertions stay on the test's thread
  std::thread writer([&] {
    write_ok = rig.engine().write(file, P, written).is_ok();
    wrote = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(wrote.load());
  later.run();
  writer.join();
  CHECK(write_ok);
  CHECK(rig.engine().stats().cached_pages == 6);  // the 2 pages asked for and 4 read ahead
  std::vector<std::uint8_t> again(3 * P);
  REQUIRE(rig.engine().read(file, 0, again).is_ok());
  auto expected = slice(bytes, 0, 3 * P);
  std::copy(written.begin(), written.end(), expected.begin() + P);
  CHECK(again == expected);

  // A fill not run is run by its destruction, before the file's release goes on.
  std::vector<std::uint8_t> tail(P);
  {
    flashdir::cache::DeferredFill pending;
    REQUIRE(rig.engine().read(file, 10 * P, tail, &pending).is_ok());
    CHECK(tail == slice(bytes, 10 * P, P));
  }
  CHECK(rig.engine().stats().cached_pages == 7);
  REQUIRE(rig.engine().release(file).is_ok());
}

TEST_CASE("a sequential reader's next request reads the backing before the cache, and it stands only for pages "
          "still missing") {
  ReadAheadFile f(4, 32);
  EngineRig& rig = f.rig;
  const std::uint32_t P = rig.page_size();
  const auto& bytes = f.bytes;
  const FileHandle file = f.file;
  std::vector<std::uint8_t> out(2 * P);
  {
    flashdir::cache::DeferredFill later;
    REQUIRE(rig.engine().read(file, 0, out, &later).is_ok());  // pages 0-1, and 2-5 read ahead
  }
  // The next request (pages 2-7) starts where the last one's pages end: page 6 is read from the
  // backing first, then pages 2-5 hit, then the read of page 6 on stands.
  std::vector<std::uint8_t> next(6 * P);
  const auto reads_before = rig.backing_faults().reads.load();
  {
    flashdir::cache::DeferredFill later;
    REQUIRE(rig.engine().read(file, 2 * P, next, &later).is_ok());
    CHECK(next == slice(bytes, 2 * P, 6 * P));
  }
  CHECK(rig.backing_faults().reads.load() - reads_before == 1);
  CHECK(rig.engine().stats().read_hit_pages == 4);

  // A page the speculation read that is cached by the time the cache is looked at (another
  // open read it meanwhile) is served from the cache, and the speculation is dropped.
  std::vector<std::uint8_t> first(2 * P);
  flashdir::cache::DeferredFill pending;
  REQUIRE(rig.engine().read(file, 8 * P, first, &pending).is_ok());  // pages 8-9, 10-13 ahead, left pending
  CHECK(rig.read_through("f", 14 * P, P) == slice(bytes, 14 * P, P));  // page 14, by another open
  std::vector<std::uint8_t> rest(8 * P);
  {
    flashdir::cache::DeferredFill later;
    REQUIRE(rig.engine().read(file, 10 * P, rest, &later).is_ok());  // speculates from page 14
    CHECK(rest == slice(bytes, 10 * P, 8 * P));
  }
  pending.run();
  std::vector<std::uint8_t> all(18 * P);
  REQUIRE(rig.engine().read(file, 0, all).is_ok());
  CHECK(all == slice(bytes, 0, 18 * P));
  REQUIRE(rig.engine().release(file).is_ok());
}

TEST_CASE("read-ahead follows an open that reads on sequentially, never a random read") {
  EngineOptions options;
  options.read_ahead_pages = 4;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  const auto bytes = pattern(2, 64 * P);
  rig.put("f", bytes);
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> out(P);
  auto read_page = [&](std::uint64_t page) {
    REQUIRE(rig.engine().read(*file, page * P, out).is_ok());
    CHECK(out == slice(bytes, page * P, P));
  };

  read_page(40);  // a random read: the page alone
  CHECK(rig.engine().stats().cached_pages == 1);
  CHECK(rig.engine().stats().read_ahead_pages == 0);
  read_page(20);
  CHECK(rig.engine().stats().cached_pages == 2);
  read_page(21);  // on from where the last read ended: 4 pages ahead
  CHECK(rig.engine().stats().cached_pages == 7);
  CHECK(rig.engine().stats().read_ahead_pages == 4);
  read_page(0);  // the start of the file counts as sequential
  CHECK(rig.engine().stats().read_ahead_pages == 8);

  // Another open's read ending where this open's next one starts does not make it sequential:
  // each open is its own stream.
  auto other = rig.engine().open_file("f");
  REQUIRE(other.is_ok());
  REQUIRE(rig.engine().read(*other, 29 * P, out).is_ok());
  read_page(30);
  CHECK(rig.engine().stats().read_ahead_pages == 8);
  CHECK(rig.engine().stats().cached_pages == 7 + 5 + 2);
  REQUIRE(rig.engine().release(*other).is_ok());
  REQUIRE(rig.engine().release(*file).is_ok());
}

TEST_CASE("write-through writes the backing file and keeps the cache in step, partial pages included") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  auto model = pattern(3, 6 * P);
  rig.put("f", model);
  CHECK(rig.read_through("f", 0, model.size()) == model);  // everything cached

  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  const auto update = pattern(4, P + 300);
  REQUIRE(rig.engine().write(*file, P / 2, update).is_ok());  // half a page, a whole one, a piece
  std::copy(update.begin(), update.end(), model.begin() + P / 2);
  const auto extension = pattern(5, 2 * P + 10);
  REQUIRE(rig.engine().write(*file, model.size() + P, extension).is_ok());  // a hole, then new pages
  model.resize(model.size() + P, 0);
  model.insert(model.end(), extension.begin(), extension.end());
  REQUIRE(rig.engine().release(*file).is_ok());

  CHECK(rig.get("f") == model);
  const auto misses = rig.engine().stats().read_miss_pages;
  CHECK(rig.read_through("f", 0, model.size() + 5) == model);
  // The rewritten pages were updated in the cache; the new whole pages were admitted.
  CHECK(rig.engine().stats().read_miss_pages - misses <= 2);
}

TEST_CASE("write-around drops the cached pages it covers and writes only the backing file") {
  EngineOptions options;
  options.write_mode = WriteMode::write_around;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  auto model = pattern(6, 8 * P);
  rig.put("f", model);
  CHECK(rig.read_through("f", 0, model.size()) == model);
  CHECK(rig.engine().stats().cached_pages == 8);
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  const auto update = pattern(7, 2 * P);
  REQUIRE(rig.engine().write(*file, 2 * P + 1, update).is_ok());
  std::copy(update.begin(), update.end(), model.begin() + 2 * P + 1);
  REQUIRE(rig.engine().release(*file).is_ok());
  CHECK(rig.engine().stats().cached_pages == 5);
  CHECK(rig.read_through("f", 0, model.size()) == model);
}

TEST_CASE("a full cache evicts by CLOCK and never exceeds its capacity") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  const auto capacity = rig.engine().stats().capacity_pages;
  const auto bytes = pattern(8, (capacity * 2 + 7) * P);
  rig.put("big", bytes);
  for (int pass = 0; pass < 2; ++pass) CHECK(rig.read_through("big", 0, bytes.size()) == bytes);
  const auto stats = rig.engine().stats();
  CHECK(stats.cached_pages <= capacity);
  CHECK(stats.evicted_pages > 0);
  CHECK(rig.read_through("big", 3 * P + 5, 9 * P) == slice(bytes, 3 * P + 5, 9 * P));
}

TEST_CASE("a file changed behind the cache is read fresh at its next open, a same-size rewrite with the old mtime included") {
  EngineRig rig;
  const auto old_bytes = pattern(9, 5 * rig.page_size());
  rig.put("f", old_bytes);
  CHECK(rig.read_through("f", 0, old_bytes.size()) == old_bytes);
  struct stat before {};
  REQUIRE(::stat(rig.backing_path("f").c_str(), &before) == 0);

  const auto new_bytes = pattern(10, old_bytes.size());
  rig.put("f", new_bytes);
  // Same size, and the modification time put back: only the change time tells.
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, rig.backing_path("f").c_str(), times, 0) == 0);
  CHECK(rig.read_through("f", 0, new_bytes.size()) == new_bytes);
  CHECK(rig.engine().stats().stale_drops == 1);
}

TEST_CASE("a file changed behind the cache while open loses its pages at the last release") {
  EngineRig rig;
  const auto old_bytes = pattern(11, 3 * rig.page_size());
  rig.put("f", old_bytes);
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> buffer(old_bytes.size());
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());
  const auto new_bytes = pattern(12, old_bytes.size());
  rig.put("f", new_bytes);
  REQUIRE(rig.engine().release(*file).is_ok());
  CHECK(rig.read_through("f", 0, new_bytes.size()) == new_bytes);
}

TEST_CASE("a change behind the cache while open is not taken for the engine's own by its next write or append") {
  // The engine's next change to the file used to record the file's attributes as its own,
  // outside change included: the stale pages survived the last release and were served at the
  // next open. An append went to the engine's old end, patching a stale cached page.
  const WriteMode mode = GENERATE(WriteMode::write_through, WriteMode::write_around, WriteMode::write_back);
  INFO("write mode " << static_cast<int>(mode));
  EngineOptions options;
  options.write_mode = mode;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 3 * P));
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> buffer(3 * P);
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());  // cached (but in write-around)

  auto expected = pattern(2, 3 * P + 100);  // behind the engine: rewritten and longer
  rig.put("f", expected);
  const auto written = pattern(3, 10);
  REQUIRE(rig.engine().write(*file, 0, written).is_ok());
  std::copy(written.begin(), written.end(), expected.begin());
  const auto appended = pattern(4, 5);
  REQUIRE(rig.engine().append(*file, appended).is_ok());
  expected.insert(expected.end(), appended.begin(), appended.end());
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());
  CHECK(buffer == slice(expected, 0, 3 * P));  // while still open, too
  REQUIRE(rig.engine().release(*file).is_ok());

  CHECK(rig.get("f") == expected);
  CHECK(rig.read_through("f", 0, expected.size() + 1) == expected);
}

TEST_CASE("a file whose opens write around the engine keeps no page, its own unseen writes notwithstanding") {
  // The daemon's opens of a file with a second name write straight to the backing file. The
  // engine used to tell those writes from its own by the backing file's attributes alone, and
  // after a write of its own (whose times it takes as its own, unseen) a same-size write around
  // it was invisible: the stale pages outlived the last release, which recorded the new times.
  const WriteMode mode = GENERATE(WriteMode::write_through, WriteMode::write_around);
  INFO("write mode " << static_cast<int>(mode));
  EngineOptions options;
  options.write_mode = mode;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  auto expected = pattern(21, 3 * P);
  rig.put("f", expected);
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> buffer(3 * P);
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());  // cached
  const auto own = pattern(22, 10);
  REQUIRE(rig.engine().write(*file, 0, own).is_ok());
  std::copy(own.begin(), own.end(), expected.begin());

  REQUIRE(rig.engine().bypass(*file).is_ok());
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());  // a miss that must not fill the cache
  CHECK(buffer == expected);
  const auto around = pattern(23, P);  // a write around the engine, in place, same size
  {
    flashdir::UniqueFd fd(::open(rig.backing_path("f").c_str(), O_WRONLY | O_CLOEXEC));
    REQUIRE(::pwrite(fd.get(), around.data(), around.size(), P) == static_cast<ssize_t>(P));
  }
  std::copy(around.begin(), around.end(), expected.begin() + P);
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());
  CHECK(buffer == expected);  // while still open
  REQUIRE(rig.engine().release(*file).is_ok());
  CHECK(rig.read_through("f", 0, expected.size()) == expected);  // and at the next open
}

TEST_CASE("truncate drops the pages past the new end; growing again reads zeros") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  auto model = pattern(13, 6 * P);
  rig.put("f", model);
  CHECK(rig.read_through("f", 0, model.size()) == model);
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().truncate(*file, 2 * P + 17).is_ok());
  REQUIRE(rig.engine().truncate(*file, 5 * P).is_ok());
  REQUIRE(rig.engine().release(*file).is_ok());
  model.resize(2 * P + 17);
  model.resize(5 * P, 0);
  CHECK(rig.get("f") == model);
  CHECK(rig.read_through("f", 0, model.size()) == model);
}

TEST_CASE("renamed files keep their pages; unlinked ones lose them") {
  EngineRig rig;
  const auto a = pattern(14, 4 * rig.page_size());
  const auto b = pattern(15, 4 * rig.page_size());
  rig.put("a", a);
  rig.put("b", b);
  CHECK(rig.read_through("a", 0, a.size()) == a);
  CHECK(rig.read_through("b", 0, b.size()) == b);
  REQUIRE(rig.engine().rename("a", "b").is_ok());  // b is replaced: its pages go
  CHECK(rig.engine().stats().cached_pages == 4);
  const auto misses = rig.engine().stats().read_miss_pages;
  CHECK(rig.read_through("b", 0, a.size()) == a);
  CHECK(rig.engine().stats().read_miss_pages == misses);
  REQUIRE(rig.engine().unlink("b").is_ok());
  CHECK(rig.engine().stats().cached_pages == 0);
  CHECK_FALSE(std::filesystem::exists(rig.backing_path("b")));
}

TEST_CASE("an unlinked open file is still served, and a new file of its name is a new file") {
  EngineRig rig;
  const auto old_bytes = pattern(16, 3 * rig.page_size());
  rig.put("f", old_bytes);
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> buffer(old_bytes.size());
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());
  REQUIRE(rig.engine().unlink("f").is_ok());
  const auto new_bytes = pattern(17, 3 * rig.page_size());
  rig.put("f", new_bytes);
  CHECK(rig.read_through("f", 0, new_bytes.size()) == new_bytes);
  REQUIRE(rig.engine().read(*file, 0, buffer).is_ok());
  CHECK(buffer == old_bytes);
  REQUIRE(rig.engine().release(*file).is_ok());
  CHECK(rig.read_through("f", 0, new_bytes.size()) == new_bytes);
}

TEST_CASE("sequential cutoffs and promotion keep pages out of the cache") {
  SECTION("a read stream past its cutoff is not admitted") {
    EngineOptions options;
    options.read_ahead_pages = 0;
    EngineRig rig_probe(options);
    options.read_sequential_cutoff_bytes = 4 * rig_probe.page_size();
    EngineRig rig(options);
    const auto bytes = pattern(18, 12 * rig.page_size());
    rig.put("f", bytes);
    auto file = rig.engine().open_file("f");
    REQUIRE(file.is_ok());
    std::vector<std::uint8_t> page(rig.page_size());
    for (std::uint64_t p = 0; p < 12; ++p) REQUIRE(rig.engine().read(*file, p * page.size(), page).is_ok());
    REQUIRE(rig.engine().release(*file).is_ok());
    CHECK(rig.engine().stats().cached_pages == 4);
    CHECK(rig.engine().stats().cutoff_bypassed_pages == 8);
  }
  SECTION("promotion admits a page on its second miss") {
    EngineOptions options;
    options.read_ahead_pages = 0;
    options.promote_after_misses = 2;
    EngineRig rig(options);
    const auto bytes = pattern(19, 3 * rig.page_size());
    rig.put("f", bytes);
    CHECK(rig.read_through("f", 0, bytes.size()) == bytes);
    CHECK(rig.engine().stats().cached_pages == 0);
    CHECK(rig.read_through("f", 0, bytes.size()) == bytes);
    CHECK(rig.engine().stats().cached_pages == 3);
  }
}

TEST_CASE("a cached page that fails verification is dropped and read from the backing file, never served") {
  EngineOptions options;
  options.read_ahead_pages = 0;
  EngineRig rig(options);
  const auto bytes = pattern(23, 6 * rig.page_size());
  rig.put("f", bytes);
  CHECK(rig.read_through("f", 0, bytes.size()) == bytes);  // slots 0..5, in order
  rig.damage_slot(2);
  CHECK(rig.read_through("f", 0, bytes.size()) == bytes);
  const auto stats = rig.engine().stats();
  CHECK(stats.corrupt_pages == 1);
  CHECK(stats.read_miss_pages == 6 + 1);
  CHECK(stats.cached_pages == 6);  // read again and admitted to a fresh slot
  CHECK(rig.read_through("f", 0, bytes.size()) == bytes);
  CHECK(rig.engine().stats().corrupt_pages == 1);
}

TEST_CASE("a restart's pages are not evicted while the cache has room for new ones") {
  // A restart leaves every page unreferenced and CLOCK's hand at the first slot: the misses after
  // it used to evict the restart's pages one by one, each the next reader's, in a cache nearly
  // empty.
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  const auto old_bytes = pattern(21, 30 * P);
  const auto new_bytes = pattern(22, 10 * P);
  rig.put("old", old_bytes);
  rig.put("new", new_bytes);
  REQUIRE(rig.engine().stats().capacity_pages > 4 * 40);
  CHECK(rig.read_through("old", 0, old_bytes.size()) == old_bytes);
  SECTION("a clean restart") { REQUIRE(rig.restart().is_ok()); }
  SECTION("a power cut after a commit") {
    REQUIRE(rig.engine().commit().is_ok());
    REQUIRE(rig.power_cycle().is_ok());
  }
  REQUIRE(rig.engine().stats().restart.usable_slots == 30);
  CHECK(rig.read_through("new", 0, new_bytes.size()) == new_bytes);
  CHECK(rig.engine().stats().evicted_pages == 0);
  CHECK(rig.read_through("old", 0, old_bytes.size()) == old_bytes);
  CHECK(rig.engine().stats().read_miss_pages == 10);
}

TEST_CASE("after a clean close every cached page is usable and hits") {
  EngineRig rig;
  const auto bytes = pattern(20, 30 * rig.page_size());
  rig.put("f", bytes);
  CHECK(rig.read_through("f", 0, bytes.size()) == bytes);
  REQUIRE(rig.restart().is_ok());
  const auto stats = rig.engine().stats();
  CHECK(stats.restart.clean_shutdown);
  CHECK(stats.restart.usable_slots == 30);
  CHECK(stats.restart.usable_fraction == 1.0);
  CHECK(rig.read_through("f", 0, bytes.size()) == bytes);
  CHECK(rig.engine().stats().read_miss_pages == 0);
}

TEST_CASE("a full cache costs at most 24 bytes of RAM per cached page, index, flags and metadata entries included") {
  // Random page reads over more files than one and more pages than the cache holds: every
  // slot taken, files' tables at whatever load their growth left them. A cache of some 12,000
  // pages, so that what does not grow with the pages (the store's bounded queues) weighs as
  // little as in a real one.
  EngineRig rig({}, 1024);
  const std::uint32_t P = rig.page_size();
  const auto capacity = rig.engine().stats().capacity_pages;
  constexpr int kFiles = 5;
  const std::uint64_t pages_per_file = capacity * 2 / kFiles;
  std::vector<FileHandle> files;
  for (int f = 0; f < kFiles; ++f) {
    rig.put("f" + std::to_string(f), pattern(static_cast<std::uint64_t>(f), pages_per_file * P));
    files.push_back(rig.engine().open_file("f" + std::to_string(f)).value());
  }
  flashdir::SeededRandom random(24);
  std::vector<std::uint8_t> page(P);
  for (std::uint64_t i = 0; i < capacity * 4; ++i) {
    const auto f = random.uniform(kFiles);
    if (!rig.engine().read(files[f], random.uniform(pages_per_file) * P, page).is_ok()) FAIL("read " << i);
  }
  const auto stats = rig.engine().stats();
  REQUIRE(stats.cached_pages == stats.capacity_pages);
  INFO("RAM per cached page " << stats.ram_bytes_per_cached_page << " over " << stats.cached_pages << " pages");
  CHECK(stats.ram_bytes_per_cached_page > 12);  // the metadata entries alone take 12
  CHECK(stats.ram_bytes_per_cached_page <= 24);
  for (FileHandle file : files) REQUIRE(rig.engine().release(file).is_ok());
}

TEST_CASE("after a power cut LUFUW keeps the clean pages of a read-heavy workload usable") {
  // Only the fills whose confirmation had not reached the chip may be dropped: a few metadata
  // pages' worth, so the cache must be large beside them (as real ones are) for the 99% figure.
  for (auto ram : flashdir::testing::kRamPolicies) {
    DYNAMIC_SECTION("ram policy " << static_cast<int>(ram)) {
      EngineRig rig({}, 1024, ram);
      const std::uint32_t P = rig.page_size();
      std::vector<std::vector<std::uint8_t>> files;
      for (int i = 0; i < 6; ++i) {
        files.push_back(pattern(100 + i, (1900 + 13 * i) * P + 7 * i));
        rig.put("f" + std::to_string(i), files.back());
      }
      for (int i = 0; i < 6; ++i) CHECK(rig.read_through("f" + std::to_string(i), 0, files[i].size()) == files[i]);
      // The read-heavy part: hits all over, one small file newly read.
      for (int i = 0; i < 6; ++i) CHECK(rig.read_through("f" + std::to_string(i), 17 * P, 40 * P) == slice(files[i], 17 * P, 40 * P));
      const auto extra = pattern(200, 20 * P);
      rig.put("extra", extra);
      CHECK(rig.read_through("extra", 0, extra.size()) == extra);
      const auto cached = rig.engine().stats().cached_pages;
      REQUIRE(rig.power_cycle().is_ok());
      const auto restart = rig.engine().stats().restart;
      CHECK_FALSE(restart.clean_shutdown);
      CHECK(restart.usable_slots >= cached * 99 / 100);
      CHECK(restart.usable_fraction >= 0.99);
      // What is dropped is the tail of unfinished fills, whatever the cache's size.
      CHECK(restart.dropped_slots <= 128);
      for (int i = 0; i < 6; ++i) CHECK(rig.read_through("f" + std::to_string(i), 0, files[i].size()) == files[i]);
      CHECK(rig.read_through("extra", 0, extra.size()) == extra);
    }
  }
}

TEST_CASE("after a commit a power cut keeps every cached page, whatever the device RAM held") {
  // A device RAM large enough to hold every fill: without a commit the cut takes them all.
  for (auto ram : flashdir::testing::kRamPolicies) {
    DYNAMIC_SECTION("ram policy " << static_cast<int>(ram)) {
      EngineRig rig({}, 1024, ram, 4 << 20);
      const std::uint32_t P = rig.page_size();
      const auto data = pattern(300, 3000 * P + 11);
      rig.put("f", data);
      CHECK(rig.read_through_in_small_fills("f", data.size()) == data);
      const auto cached = rig.engine().stats().cached_pages;
      REQUIRE(cached > 2900);

      SECTION("without a commit the fills still in the device RAM are dropped") {
        REQUIRE(rig.power_cycle().is_ok());
        CHECK(rig.engine().stats().restart.dropped_slots > 100);
      }
      SECTION("after one, every page is usable, and a second commit has nothing to do") {
        REQUIRE(rig.engine().commit().is_ok());
        CHECK(rig.engine().stats().commits == 1);
        REQUIRE(rig.engine().commit().is_ok());
        CHECK(rig.engine().stats().commits == 1);
        REQUIRE(rig.power_cycle().is_ok());
        const auto restart = rig.engine().stats().restart;
        CHECK_FALSE(restart.clean_shutdown);
        CHECK(restart.usable_slots == cached);
        CHECK(restart.dropped_slots == 0);
      }
      CHECK(rig.read_through("f", 0, data.size()) == data);
    }
  }
}

TEST_CASE("after a power cut a file written through the engine since its last release is read fresh") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  auto model = pattern(21, 8 * P);
  rig.put("f", model);
  CHECK(rig.read_through("f", 0, model.size()) == model);
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  const auto update = pattern(22, 3 * P);
  REQUIRE(rig.engine().write(*file, P, update).is_ok());
  std::copy(update.begin(), update.end(), model.begin() + P);
  REQUIRE(rig.power_cycle().is_ok());
  CHECK(rig.read_through("f", 0, model.size()) == model);
}

TEST_CASE("the metadata scheme is fixed when a cache is first used") {
  EngineRig rig;
  EngineOptions other;
  other.metadata = MetadataScheme::write_update;
  const auto status = rig.reopen_with(other);
  CHECK(status.code() == flashdir::StatusCode::invalid_argument);
  CHECK_THAT(status.message(), Catch::Contains("lufuw"));
}

TEST_CASE("bad options and bad paths are refused with a clear error") {
  EngineOptions options;
  options.dirty_low_watermark_percent = 60;
  CHECK_THAT(options.validate().message(), Catch::Contains("dirty_low_watermark_percent"));
  options = {};
  options.promote_after_misses = 0;
  CHECK_FALSE(options.validate().is_ok());
  CHECK_FALSE(flashdir::cache::parse_write_mode("sometimes").is_ok());
  CHECK(flashdir::cache::parse_metadata_scheme("write-update").value() == MetadataScheme::write_update);

  EngineRig rig;
  CHECK(rig.engine().open_file("missing").status().code() == flashdir::StatusCode::not_found);
  CHECK(rig.engine().open_file("../escape").status().code() == flashdir::StatusCode::invalid_argument);
  std::filesystem::create_symlink("/etc/passwd", rig.backing_path("link"));
  CHECK_FALSE(rig.engine().open_file("link").is_ok());
  CHECK(rig.engine().read(flashdir::cache::FileHandle{999}, 0, {}).status().code() ==
        flashdir::StatusCode::invalid_argument);
}
