// A catalog that lost records (its write-ahead log deleted, an older copy put back, everything
// gone) never lets a cached page be served as another file's: file ids are never given out twice
// (the durable file id limit), and pages the catalog cannot name are never served, dirty ones
// kept in lost+found (issue 18 §1, doc/cache.md "Files, staleness and the catalog").
#include <catch2/catch.hpp>
#include <filesystem>

#include "engine_rig.h"

using flashdir::Catalog;
using flashdir::cache::EngineOptions;
using flashdir::cache::FileHandle;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

void copy_catalog(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::remove_all(to);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
}

}  // namespace

TEST_CASE("catalog loss: an older catalog put back never names the pages of files it forgot") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  const auto snapshot = rig.scratch_dir() / "older-catalog";
  for (int i = 0; i < 3; ++i) {
    rig.put("a" + std::to_string(i), pattern(10 + i, 4 * P));
    CHECK(rig.read_through("a" + std::to_string(i), 0, 4 * P) == pattern(10 + i, 4 * P));
  }
  REQUIRE(rig.edit_catalog([&](const auto& dir) { copy_catalog(dir, snapshot); }).is_ok());
  for (int i = 0; i < 3; ++i) {
    rig.put("b" + std::to_string(i), pattern(20 + i, 4 * P));
    CHECK(rig.read_through("b" + std::to_string(i), 0, 4 * P) == pattern(20 + i, 4 * P));
  }
  // The catalog goes back to before the b files: it would give their ids out again.
  REQUIRE(rig.edit_catalog([&](const auto& dir) { copy_catalog(snapshot, dir); }).is_ok());
  const auto restart = rig.engine().stats().restart;
  CHECK(restart.catalog_lost_files == 3);
  CHECK(restart.orphan_slots > 0);
  for (int i = 0; i < 3; ++i) {
    const std::string name = "c" + std::to_string(i);
    rig.put(name, pattern(30 + i, P));
    auto file = rig.engine().open_file(name);
    REQUIRE(file.is_ok());
    REQUIRE(rig.engine().truncate(*file, 4 * P).is_ok());  // pages 1-3 are holes: zeros
    std::vector<std::uint8_t> bytes(4 * P);
    REQUIRE(rig.engine().read(*file, 0, bytes).value() == 4 * P);
    auto expected = pattern(30 + i, P);
    expected.resize(4 * P, 0);
    CHECK(bytes == expected);
    REQUIRE(rig.engine().release(*file).is_ok());
  }
  CHECK(rig.read_through("a1", 0, 4 * P) == pattern(11, 4 * P));
}

TEST_CASE("catalog loss: a catalog that lost everything keeps nothing unproven and saves dirty pages") {
  EngineOptions options;
  options.write_mode = WriteMode::write_back;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  rig.put("clean", pattern(1, 2 * P));
  CHECK(rig.read_through("clean", 0, 2 * P) == pattern(1, 2 * P));
  rig.put("dirty", pattern(2, 2 * P));
  auto file = rig.engine().open_file("dirty");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, 0, pattern(3, P)).is_ok());
  REQUIRE(rig.engine().fsync(*file).is_ok());
  // A power cut with the dirty page only in the cache, and the catalog lost before the restart.
  REQUIRE(rig.edit_catalog(
                 [&](const auto& dir) {
                   std::filesystem::remove_all(dir);
                   REQUIRE(Catalog::create(dir).is_ok());
                 },
                 true)
              .is_ok());
  const auto restart = rig.engine().stats().restart;
  CHECK(restart.catalog_lost_files >= 1);  // the dirty file; the clean fill may not have been durable
  CHECK(restart.saved_dirty_slots == 1);
  REQUIRE(restart.saved_files.size() == 1);
  CHECK(restart.saved_files.front().find("-record-lost") != std::string::npos);
  CHECK(rig.engine().stats().cached_pages == 0);
  CHECK(rig.get("dirty") == pattern(2, 2 * P));  // never written anywhere unproven
  // New files get ids past every one the old catalog gave out.
  rig.put("new", pattern(4, P));
  auto fresh = rig.engine().open_file("new");
  REQUIRE(fresh.is_ok());
  REQUIRE(rig.engine().truncate(*fresh, 2 * P).is_ok());
  std::vector<std::uint8_t> bytes(2 * P);
  REQUIRE(rig.engine().read(*fresh, 0, bytes).value() == 2 * P);
  auto expected = pattern(4, P);
  expected.resize(2 * P, 0);
  CHECK(bytes == expected);
  REQUIRE(rig.engine().release(*fresh).is_ok());
}
