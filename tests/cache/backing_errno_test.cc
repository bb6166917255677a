// The posix backing store reports a failed system call with its code (how the engine reacts)
// and the call's errno (what the daemon tells its caller), and the engine hands that errno on
// untouched. Errors provoked without root: EFBIG past RLIMIT_FSIZE (with SIGXFSZ ignored),
// EOPNOTSUPP from fallocate mode bits no file system knows, ENOENT and ENOTDIR from paths.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "engine_rig.h"
#include "support/file_size_limit.h"
#include "support/temp_dir.h"

using flashdir::Status;
using flashdir::StatusCode;
using flashdir::cache::EngineOptions;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::FileSizeLimit;
using flashdir::testing::pattern;
using flashdir::testing::TempDir;

namespace {

constexpr rlim_t kLimitBytes = 1 << 20;

std::unique_ptr<flashdir::cache::BackingFile> open_backing(flashdir::cache::BackingStore& store,
                                                           const TempDir& dir, const std::string& name) {
  std::ofstream(dir / name).put('x');
  auto file = store.open(name);
  INFO(file.status().to_string());
  REQUIRE(file.is_ok());
  return std::move(file).value();
}

}  // namespace

TEST_CASE("the posix backing store keeps the errno of a failed system call beside its code") {
  TempDir dir;
  auto store = flashdir::cache::open_posix_backing_store(dir.path());
  REQUIRE(store.is_ok());
  auto file = open_backing(**store, dir, "f");
  const auto bytes = pattern(1, 8192);

  SECTION("a write past RLIMIT_FSIZE: EFBIG, an I/O error to the engine") {
    FileSizeLimit limit(kLimitBytes);
    const Status s = file->write(kLimitBytes - 4096, bytes);
    CHECK(s.code() == StatusCode::io_error);
    CHECK(s.sys_errno() == EFBIG);
    CHECK(s.message().find("File too large") != std::string::npos);
  }
  SECTION("a truncate past RLIMIT_FSIZE: EFBIG") {
    FileSizeLimit limit(kLimitBytes);
    const Status s = file->truncate(2 * kLimitBytes);
    CHECK(s.code() == StatusCode::io_error);
    CHECK(s.sys_errno() == EFBIG);
  }
  SECTION("fallocate with a mode bit no file system supports: EOPNOTSUPP, invalid_argument to the engine") {
    const Status s = file->allocate(0x4000, 0, 4096);
    CHECK(s.code() == StatusCode::invalid_argument);
    CHECK(s.sys_errno() == EOPNOTSUPP);
  }
  SECTION("a missing file: ENOENT, not_found") {
    auto missing = (*store)->open("missing");
    CHECK(missing.status().code() == StatusCode::not_found);
    CHECK(missing.status().sys_errno() == ENOENT);
  }
  SECTION("a path through a regular file: ENOTDIR, invalid_argument") {
    auto through = (*store)->open("f/g");
    CHECK(through.status().code() == StatusCode::invalid_argument);
    CHECK(through.status().sys_errno() == ENOTDIR);
  }
  SECTION("a refusal the store makes itself carries no errno") {
    auto dotted = (*store)->open("../f");
    CHECK(dotted.status().code() == StatusCode::invalid_argument);
    CHECK(dotted.status().sys_errno() == 0);
  }
}

TEST_CASE("the engine hands the backing file's errno on in every write mode") {
  for (const WriteMode mode : {WriteMode::write_through, WriteMode::write_around, WriteMode::write_back}) {
    DYNAMIC_SECTION(flashdir::cache::write_mode_name(mode)) {
      EngineOptions options;
      options.write_mode = mode;
      EngineRig rig(options);
      rig.put("f", pattern(1, 100));
      auto file = rig.engine().open_file("f");
      REQUIRE(file.is_ok());
      const auto bytes = pattern(2, 2 * rig.page_size());
      {
        FileSizeLimit limit(kLimitBytes);
        auto written = rig.engine().write(*file, kLimitBytes - rig.page_size() / 2, bytes);
        // Write-back defers the error to the write-back (close(2) in the daemon).
        const Status s = mode == WriteMode::write_back ? (written.is_ok() ? rig.engine().write_back(*file)
                                                                          : written.status())
                                                       : written.status();
        INFO(s.to_string());
        CHECK(s.code() == StatusCode::io_error);
        CHECK(s.sys_errno() == EFBIG);
        const Status truncated = rig.engine().truncate(*file, 4 * kLimitBytes);
        CHECK(truncated.sys_errno() == EFBIG);
      }
      // Without the limit the same write, and the write-back, succeed: nothing stuck.
      auto again = rig.engine().write(*file, kLimitBytes - rig.page_size() / 2, bytes);
      INFO(again.status().to_string());
      REQUIRE(again.is_ok());
      REQUIRE(rig.engine().write_back(*file).is_ok());
      REQUIRE(rig.engine().release(*file).is_ok());
      const auto backing = rig.get("f");
      REQUIRE(backing.size() == kLimitBytes - rig.page_size() / 2 + bytes.size());
      CHECK(std::equal(bytes.begin(), bytes.end(), backing.end() - static_cast<std::ptrdiff_t>(bytes.size())));
    }
  }
}

TEST_CASE("a file whose write-back fails at its last release keeps its dirty pages") {
  EngineOptions options;
  options.write_mode = WriteMode::write_back;
  EngineRig rig(options);
  rig.put("f", pattern(1, 100));
  const auto bytes = pattern(2, 4 * rig.page_size());
  const std::uint64_t offset = kLimitBytes - rig.page_size();
  {
    auto file = rig.engine().open_file("f");
    REQUIRE(file.is_ok());
    REQUIRE(rig.engine().write(*file, offset, bytes).is_ok());
    rig.backing_faults().write_errno = ENOSPC;  // a full backing file system, for now
    const Status released = rig.engine().release(*file);
    CHECK(released.sys_errno() == ENOSPC);
    rig.backing_faults().write_errno = 0;
  }
  const auto expected_size = offset + bytes.size();

  SECTION("a reopen carries on with them (they are not taken for a change behind the cache)") {
    auto again = rig.engine().open_file("f");
    REQUIRE(again.is_ok());
    CHECK(rig.engine().size(*again).value() == expected_size);
    std::vector<std::uint8_t> got(bytes.size());
    auto read = rig.engine().read(*again, offset, got);
    REQUIRE(read.is_ok());
    CHECK(got == bytes);
    CHECK(rig.engine().stats().stale_drops == 0);
    // The space back, the next last release writes them back.
    REQUIRE(rig.engine().release(*again).is_ok());
    const auto backing = rig.get("f");
    REQUIRE(backing.size() == expected_size);
    CHECK(std::equal(bytes.begin(), bytes.end(), backing.begin() + static_cast<std::ptrdiff_t>(offset)));
    CHECK(rig.engine().stats().dirty_pages == 0);
  }
  SECTION("a rename takes them along") {
    REQUIRE(rig.engine().rename("f", "g").is_ok());
    auto again = rig.engine().open_file("g");
    REQUIRE(again.is_ok());
    CHECK(rig.engine().size(*again).value() == expected_size);
    REQUIRE(rig.engine().release(*again).is_ok());
    CHECK(rig.get("g").size() == expected_size);
  }
  SECTION("an unlink drops them and lets the backing file go") {
    REQUIRE(rig.engine().unlink("f").is_ok());
    CHECK(rig.engine().stats().dirty_pages == 0);
    CHECK(rig.engine().stats().cached_pages == 0);
    REQUIRE(rig.engine().close().is_ok());  // nothing left to write back
  }
}

TEST_CASE("write-back pages past the largest file the backing allows are dropped, reported once, and nothing is stuck") {
  // EFBIG (RLIMIT_FSIZE here; a file system's maximum file size alike) never goes away for those
  // offsets: kept dirty, the pages made every later write-back, truncate and close of the file
  // fail with it, for good.
  const bool by_flusher = GENERATE(false, true);
  INFO((by_flusher ? "the flusher finds it" : "a close finds it"));
  EngineOptions options;
  options.write_mode = WriteMode::write_back;
  if (by_flusher) {
    options.dirty_high_watermark_percent = 1;
    options.dirty_low_watermark_percent = 0;
  }
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 100));
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  const auto below = pattern(2, 2 * P);
  FileSizeLimit limit(kLimitBytes);
  REQUIRE(rig.engine().write(*file, kLimitBytes - 2 * P, below).is_ok());
  // Past the limit: enough pages to pass the high watermark.
  const std::uint64_t past_pages = rig.engine().stats().capacity_pages / 100 + 3;
  REQUIRE(rig.engine().write(*file, kLimitBytes, pattern(3, past_pages * P)).is_ok());

  if (by_flusher) {
    for (int i = 0; i < 500 && rig.engine().stats().dirty_pages > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(rig.engine().stats().dirty_pages == 0);
  }
  // The next fsync or close says what was lost, once.
  const Status first = by_flusher ? rig.engine().fsync(*file) : rig.engine().write_back(*file);
  INFO(first.to_string());
  CHECK(first.sys_errno() == EFBIG);
  CHECK(rig.engine().stats().dirty_pages == 0);
  CHECK(rig.engine().write_back(*file).is_ok());
  CHECK(rig.engine().fsync(*file).is_ok());

  // The pages below the limit went back; the file takes writes, truncates and closes again.
  const auto backing = rig.get("f");
  REQUIRE(backing.size() == kLimitBytes);
  CHECK(std::equal(below.begin(), below.end(), backing.end() - static_cast<std::ptrdiff_t>(below.size())));
  CHECK(rig.engine().truncate(*file, 2 * P).is_ok());
  REQUIRE(rig.engine().write(*file, P, pattern(4, P)).is_ok());
  CHECK(rig.engine().fsync(*file).is_ok());
  CHECK(rig.engine().release(*file).is_ok());
  auto expected = pattern(1, 100);
  expected.resize(P, 0);
  const auto four = pattern(4, P);
  expected.insert(expected.end(), four.begin(), four.end());
  CHECK(rig.get("f") == expected);
}
