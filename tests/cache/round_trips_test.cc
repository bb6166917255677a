// Backing round trips (doc/cache.md "Backing round trips"): what an open, a hit and a
// write-through write ask of the backing store, counted by the rig's backing double, and that
// what they no longer ask for still leaves no stale page.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "engine_rig.h"

using flashdir::BackingAttributes;
using flashdir::cache::FileHandle;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

FileHandle open(EngineRig& rig, const std::string& name) {
  auto file = rig.engine().open_file(name);
  REQUIRE(file.is_ok());
  return *file;
}

void write(EngineRig& rig, FileHandle file, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  auto n = rig.engine().write(file, offset, bytes);
  REQUIRE(n.is_ok());
  REQUIRE(*n == bytes.size());
}

std::vector<std::uint8_t> read(EngineRig& rig, FileHandle file, std::uint64_t offset, std::size_t length) {
  std::vector<std::uint8_t> out(length);
  auto n = rig.engine().read(file, offset, out);
  REQUIRE(n.is_ok());
  out.resize(*n);
  return out;
}

}  // namespace

TEST_CASE("round trips: a write-through or write-around write after the first of an open stats nothing, unless it reaches the file's end") {
  const WriteMode mode = GENERATE(WriteMode::write_through, WriteMode::write_around);
  CAPTURE(static_cast<int>(mode));
  flashdir::cache::EngineOptions options;
  options.write_mode = mode;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 8 * P + 10));
  const FileHandle file = open(rig, "f");
  const std::uint64_t stats_before = rig.backing_faults().stats;
  write(rig, file, 0, pattern(2, P));  // the first checks for a change behind the engine
  CHECK(rig.backing_faults().stats == stats_before + 1);
  for (std::uint32_t i = 1; i < 8; ++i) write(rig, file, i * P, pattern(2 + i, P));
  CHECK(rig.backing_faults().stats == stats_before + 1);
  // A write that reaches the end checks: its new size would hide one changed behind the engine.
  write(rig, file, 8 * P, pattern(10, P));
  CHECK(rig.backing_faults().stats == stats_before + 2);
  CHECK(rig.backing_faults().writes == 9);
  // Acknowledged only once the backing file has them.
  CHECK(rig.get("f").size() == 9 * P);
  REQUIRE(rig.engine().release(file).is_ok());
  // The release took the times the writes left as the engine's own: nothing was dropped.
  CHECK(rig.engine().stats().stale_drops == 0);
  if (mode == WriteMode::write_through) {
    const FileHandle again = open(rig, "f");
    CHECK(read(rig, again, 0, 9 * P) == rig.get("f"));
    CHECK(rig.engine().stats().read_miss_pages == 0);
    REQUIRE(rig.engine().release(again).is_ok());
  }
}

TEST_CASE("round trips: the last release of a file only read stats nothing; a change behind it is found at the next open") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 2 * P));
  const FileHandle file = open(rig, "f");
  CHECK(read(rig, file, 0, 2 * P) == pattern(1, 2 * P));
  rig.put("f", pattern(2, 2 * P));  // behind the engine, while open
  const std::uint64_t stats_before = rig.backing_faults().stats;
  REQUIRE(rig.engine().release(file).is_ok());
  CHECK(rig.backing_faults().stats == stats_before);
  CHECK(rig.read_through("f", 0, 2 * P) == pattern(2, 2 * P));
  CHECK(rig.engine().stats().stale_drops == 1);
  // A file written through the engine is stat'ed at its last release, which records it.
  const FileHandle writer = open(rig, "f");
  write(rig, writer, 0, pattern(3, P));
  const std::uint64_t stats_before_writer = rig.backing_faults().stats;
  REQUIRE(rig.engine().release(writer).is_ok());
  CHECK(rig.backing_faults().stats > stats_before_writer);
}

TEST_CASE("round trips: a change of size behind the engine between its unstat'ed writes is still seen") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 2 * P));
  const FileHandle file = open(rig, "f");
  CHECK(read(rig, file, 0, 2 * P) == pattern(1, 2 * P));
  write(rig, file, 0, pattern(2, P));
  rig.append("f", pattern(3, P / 2));  // between two writes that take no stat
  write(rig, file, P, pattern(4, P / 2));
  REQUIRE(rig.engine().release(file).is_ok());
  CHECK(rig.engine().stats().stale_drops == 1);
  CHECK(rig.read_through("f", 0, 3 * P) == rig.get("f"));
}

TEST_CASE("round trips: an append stats the backing file once; in write-back only the first of an open's run does") {
  // Each append stat'ed the backing file for its end and, in write-through, once more for its
  // write's check: over a store with 1 ms calls, 4.8 ms an append against the store's own 2.2,
  // and 2.4 ms in write-back, which writes nothing to the store. Write-through and write-around
  // still stat before each (a write that reaches the file's end: check_before_write).
  const WriteMode mode = GENERATE(WriteMode::write_through, WriteMode::write_around, WriteMode::write_back);
  CAPTURE(static_cast<int>(mode));
  flashdir::cache::EngineOptions options;
  options.write_mode = mode;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  auto expected = pattern(1, P + 10);
  rig.put("f", expected);
  const FileHandle file = open(rig, "f");
  const std::uint64_t stats_before = rig.backing_faults().stats;
  for (std::uint32_t i = 0; i < 8; ++i) {
    const auto record = pattern(10 + i, 100);
    REQUIRE(rig.engine().append(file, record).is_ok());
    expected.insert(expected.end(), record.begin(), record.end());
  }
  write(rig, file, 3, pattern(20, 5));  // part of a page, short of the end: no stat
  std::copy_n(pattern(20, 5).begin(), 5, expected.begin() + 3);
  CHECK(rig.backing_faults().stats == stats_before + (mode == WriteMode::write_back ? 1 : 8));
  CHECK(read(rig, file, 0, expected.size() + 1) == expected);
  REQUIRE(rig.engine().release(file).is_ok());
  CHECK(rig.get("f") == expected);
  CHECK(rig.engine().stats().stale_drops == 0);
  CHECK(rig.read_through("f", 0, expected.size() + 1) == expected);
  // The next open's writes check again.
  const FileHandle again = open(rig, "f");
  const std::uint64_t stats_again = rig.backing_faults().stats;
  REQUIRE(rig.engine().append(again, pattern(30, 10)).is_ok());
  CHECK(rig.backing_faults().stats == stats_again + 1);
  REQUIRE(rig.engine().release(again).is_ok());
}

TEST_CASE("round trips: write-back, a file grown behind the engine between its unstat'ed appends serves no stale page") {
  // The limit of write-back's appends, which take the engine's end (check_before_write): the
  // second lands where the engine's end was, over what was appended behind it, as a second NFS
  // client appending without locks would. What the cache then serves is what the backing file
  // holds.
  flashdir::cache::EngineOptions options;
  options.write_mode = WriteMode::write_back;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, P + 10));
  const FileHandle file = open(rig, "f");
  CHECK(read(rig, file, 0, P + 10) == pattern(1, P + 10));
  REQUIRE(rig.engine().append(file, pattern(2, 100)).is_ok());
  rig.append("f", pattern(3, P));
  REQUIRE(rig.engine().append(file, pattern(4, 100)).is_ok());
  REQUIRE(rig.engine().release(file).is_ok());
  const auto backing = rig.get("f");
  REQUIRE(backing.size() >= 2 * P + 10);
  CHECK(std::vector<std::uint8_t>(backing.begin() + P + 110, backing.begin() + P + 210) == pattern(4, 100));
  CHECK(rig.read_through("f", 0, backing.size() + 1) == backing);
}

TEST_CASE("round trips: an open given the caller's stat, of a file opened on use: a hit opens nothing") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 2 * P));
  CHECK(rig.read_through("f", 0, 2 * P) == pattern(1, 2 * P));  // cached
  const int fd = ::open(rig.backing_path("f").c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct statx st {};
  REQUIRE(::statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &st) == 0);
  const BackingAttributes attributes = flashdir::cache::attributes_of_statx(st);
  std::atomic<int> opens{0};
  auto backing = flashdir::cache::adopt_posix_backing_file_opened_on_use(fd, "f", [&](int reference) {
    ++opens;
    return ::fcntl(reference, F_DUPFD_CLOEXEC, 0);
  });
  auto file = rig.engine().open_file("f", std::move(backing), attributes);
  REQUIRE(file.is_ok());
  // A hit opens no backing file.
  CHECK(read(rig, *file, 0, 2 * P) == pattern(1, 2 * P));
  CHECK(rig.engine().stats().stale_drops == 0);
  CHECK(opens == 0);
  // A write opens it, once.
  write(rig, *file, 2 * P, pattern(2, P));
  write(rig, *file, 3 * P, pattern(3, P));
  CHECK(opens == 1);
  REQUIRE(rig.engine().release(*file).is_ok());
  CHECK(rig.read_through("f", 0, 4 * P) == rig.get("f"));
  CHECK(rig.engine().stats().read_miss_pages == 2);  // the first read's only
}

TEST_CASE("round trips: a backing file opened on use stats through its reference, and reports a failed open") {
  EngineRig rig;
  rig.put("f", pattern(1, 100));
  const int fd = ::open(rig.backing_path("f").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::atomic<int> opens{0};
  auto file = flashdir::cache::adopt_posix_backing_file_opened_on_use(fd, "f", [&](int) {
    ++opens;
    errno = EACCES;
    return -1;
  });
  auto attributes = file->stat();
  REQUIRE(attributes.is_ok());
  CHECK(attributes->size_bytes == 100);
  CHECK(opens == 0);
  std::vector<std::uint8_t> out(10);
  auto n = file->read(0, out);
  REQUIRE_FALSE(n.is_ok());
  CHECK(n.status().sys_errno() == EACCES);
  CHECK(opens == 1);
}

TEST_CASE("round trips: a backing file read in parallel pieces returns what one read returns") {
  EngineRig rig;
  const auto bytes = pattern(9, 1'000'003);
  rig.put("f", bytes);
  const int fd = ::open(rig.backing_path("f").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto file = flashdir::cache::adopt_posix_backing_file(fd, "f", flashdir::cache::BackingReads{.parallel_piece_bytes = 4096});
  // Whole pieces, a piece cut short by the end of the file, a read that starts past it.
  for (const auto& [offset, length] : std::vector<std::pair<std::uint64_t, std::size_t>>{
           {0, 4096}, {0, 5 * 4096}, {123, 70'001}, {995'000, 4 * 4096}, {1'000'003 - 4096, 3 * 4096}, {1'000'003, 9000},
           {2'000'000, 4096}}) {
    INFO("offset " << offset << " length " << length);
    std::vector<std::uint8_t> out(length, 0xEE);
    auto n = file->read(offset, out);
    REQUIRE(n.is_ok());
    const std::size_t expected = offset >= bytes.size() ? 0 : std::min<std::size_t>(length, bytes.size() - offset);
    CHECK(*n == expected);
    out.resize(*n);
    CHECK(out == std::vector<std::uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(offset, bytes.size())),
                                           bytes.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(offset, bytes.size()) + expected)));
  }
  // A piece that fails fails the read.
  const int write_only = ::open(rig.backing_path("f").c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(write_only >= 0);
  auto unreadable =
      flashdir::cache::adopt_posix_backing_file(write_only, "f", flashdir::cache::BackingReads{.parallel_piece_bytes = 4096});
  std::vector<std::uint8_t> out(5 * 4096);
  auto n = unreadable->read(0, out);
  REQUIRE_FALSE(n.is_ok());
  CHECK(n.status().sys_errno() == EBADF);
}

namespace {

// Descriptors of this process open on `path` with O_DIRECT (from /proc/self/fdinfo).
int direct_descriptors_on(const std::string& path) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    if (std::filesystem::read_symlink(entry.path(), error) != std::filesystem::path(path) || error) continue;
    std::ifstream info("/proc/self/fdinfo/" + entry.path().filename().string());
    for (std::string line; std::getline(info, line);)
      if (line.rfind("flags:", 0) == 0 && (std::stoul(line.substr(6), nullptr, 8) & O_DIRECT) != 0) ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("round trips: a backing file's long reads go through a direct descriptor and return what one read returns") {
  EngineRig rig;
  const auto bytes = pattern(5, 1'000'003);
  rig.put("f", bytes);
  const std::string path = std::filesystem::canonical(rig.backing_path("f")).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const flashdir::cache::BackingReads reads{.direct_above_bytes = 8192, .parallel_piece_bytes = 4096};
  auto file = flashdir::cache::adopt_posix_backing_file(fd, "f", reads);
  // Aligned as a local file system's O_DIRECT wants it (the network and FUSE clients do not).
  constexpr std::size_t kMost = 64 * 4096;
  std::unique_ptr<std::uint8_t, decltype(&std::free)> buffer(
      static_cast<std::uint8_t*>(std::aligned_alloc(4096, kMost)), &std::free);
  // A short read (buffered, no descriptor yet), long ones, one cut short by the end of the file.
  for (const auto& [offset, length] : std::vector<std::pair<std::uint64_t, std::size_t>>{
           {0, 4096}, {0, 5 * 4096}, {40 * 4096, 64 * 4096}, {240 * 4096, 8 * 4096}, {2'000'000 - 8192, 4 * 4096}}) {
    INFO("offset " << offset << " length " << length);
    if (length == 4096) CHECK(direct_descriptors_on(path) == 0);
    const flashdir::ByteSpan out(buffer.get(), length);
    std::fill(out.begin(), out.end(), std::uint8_t{0xEE});
    auto n = file->read(offset, out);
    REQUIRE(n.is_ok());
    const std::size_t expected = offset >= bytes.size() ? 0 : std::min<std::size_t>(length, bytes.size() - offset);
    CHECK(*n == expected);
    CHECK(std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(expected),
                     bytes.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(offset, bytes.size()))));
  }
  CHECK_FALSE(reads.direct_refused->load());
  CHECK(direct_descriptors_on(path) == 1);  // opened once, at the first long read
  file.reset();
  CHECK(direct_descriptors_on(path) == 0);
}

TEST_CASE("round trips: once a store refuses a direct read, every file sharing the refusal reads through its page cache") {
  // procfs has no direct I/O: O_DIRECT opens fail with EINVAL there.
  const auto plain = [] {
    std::ifstream in("/proc/version", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  REQUIRE_FALSE(plain.empty());
  const flashdir::cache::BackingReads reads{.direct_above_bytes = 16};
  const flashdir::cache::BackingReads others;
  for (int file_no = 0; file_no < 2; ++file_no) {
    const int fd = ::open("/proc/version", O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    auto file = flashdir::cache::adopt_posix_backing_file(fd, "version", reads);
    std::vector<std::uint8_t> out(4096);
    auto n = file->read(0, out);
    REQUIRE(n.is_ok());
    CHECK(std::string(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(*n)) == plain);
    CHECK(reads.direct_refused->load());
  }
  CHECK_FALSE(others.direct_refused->load());
}

TEST_CASE("round trips: a miss reads the rest of the request from the backing in one read, up to miss_read_pages") {
  flashdir::cache::EngineOptions options;
  options.miss_read_pages = 256;
  options.read_ahead_pages = 0;
  EngineRig rig(options, 1024);
  const std::uint32_t P = rig.page_size();
  const auto bytes = pattern(4, 600 * P + 11);
  rig.put("f", bytes);
  const FileHandle file = open(rig, "f");
  const std::uint64_t reads_before = rig.backing_faults().reads;
  // 300 pages from page 3: one backing read of 256 pages, one of 44.
  CHECK(read(rig, file, 3 * P + 5, 300 * P) ==
        std::vector<std::uint8_t>(bytes.begin() + 3 * P + 5, bytes.begin() + 303 * P + 5));
  CHECK(rig.backing_faults().reads - reads_before == 2);
  CHECK(rig.engine().stats().read_miss_pages == 301);
  // Every page of it is cached: the same read again hits.
  CHECK(read(rig, file, 3 * P + 5, 300 * P) ==
        std::vector<std::uint8_t>(bytes.begin() + 3 * P + 5, bytes.begin() + 303 * P + 5));
  CHECK(rig.engine().stats().read_hit_pages == 301);
  REQUIRE(rig.engine().release(file).is_ok());
}
