// Commits (doc/cache.md "Commit"): by time in the background, and by the amount of unprotected
// data; what a power cut keeps of the writes before them.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "engine_rig.h"

using flashdir::cache::EngineOptions;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

// Opens `name`, writes `bytes` at 0 through the engine, releases it.
void write_through_engine(EngineRig& rig, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  auto file = rig.engine().open_file(name);
  INFO(file.status().to_string());
  REQUIRE(file.is_ok());
  auto wrote = rig.engine().write(*file, 0, bytes);
  INFO(wrote.status().to_string());
  REQUIRE(wrote.is_ok());
  REQUIRE(rig.engine().release(*file).is_ok());
}

// Reads `name` (its whole `bytes`), checks them and returns the pages that hit.
std::uint64_t pages_hit(EngineRig& rig, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const std::uint64_t before = rig.engine().stats().read_hit_pages;
  CHECK(rig.read_through(name, 0, bytes.size()) == bytes);
  return rig.engine().stats().read_hit_pages - before;
}

}  // namespace

// Without commits a cut here drops the fills of the 63 metadata pages the window holds (some
// 800 of the rig's small pages: the fills stay unfinished while an older buffered write holds
// the FTL's durable watermark back), a quarter of what is cached.
TEST_CASE("a power cut keeps the pages cached more than a second before it, in every write mode") {
  for (WriteMode mode : {WriteMode::write_through, WriteMode::write_back, WriteMode::write_around}) {
    DYNAMIC_SECTION("write mode " << flashdir::cache::write_mode_name(mode)) {
      // The engine's own defaults decide when it commits.
      EngineOptions options;
      options.write_mode = mode;
      EngineRig rig(options, 1024, flashdir::format::RamPolicy::tree, 4 << 20);
      REQUIRE(rig.commit_in_background().is_ok());
      const std::uint32_t P = rig.page_size();
      // Older than a second at the cut: a file written through the engine (in write-around the
      // write caches nothing and the file is read after it), and one read.
      const auto read_old = pattern(1, 1500 * P);
      const auto written_old = pattern(2, 1500 * P);
      rig.put("read-old", read_old);
      rig.put("written-old", pattern(3, 1500 * P));
      write_through_engine(rig, "written-old", written_old);
      if (mode == WriteMode::write_around) CHECK(rig.read_through("written-old", 0, written_old.size()) == written_old);
      CHECK(rig.read_through("read-old", 0, read_old.size()) == read_old);
      const std::uint64_t old_pages = rig.engine().stats().cached_pages;
      REQUIRE(old_pages >= 2900);
      // A second and a half, and on a machine too loaded to run the committer in that time, as
      // long as it takes it to commit once (no time is asserted: the bench measures it).
      const std::uint64_t commits_before = rig.engine().stats().commits;
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (rig.engine().stats().commits == commits_before && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      // Younger ones: what a cut keeps of them depends on timing, and is not checked. Fewer
      // than the window holds, or their fills would force the older ones out of it.
      const auto young = pattern(4, 100 * P);
      rig.put("young", young);
      CHECK(rig.read_through("young", 0, young.size()) == young);

      REQUIRE(rig.power_cycle().is_ok());
      CHECK_FALSE(rig.engine().stats().restart.clean_shutdown);
      const std::uint64_t kept = pages_hit(rig, "read-old", read_old) + pages_hit(rig, "written-old", written_old);
      INFO("kept " << kept << " of " << old_pages);
      CHECK(kept * 100 >= old_pages * 99);
      CHECK(rig.read_through("young", 0, young.size()) == young);
    }
  }
}

TEST_CASE("the bound on unprotected data commits: a cut loses less than that, whatever the device RAM holds") {
  EngineOptions options;
  const std::uint32_t P = flashdir::testing::small_ftl_geometry().page_size_bytes;
  options.commit_pending_bytes = std::uint64_t{64} * P;
  // The rig's engines commit by no time: only the bound (or an explicit commit) does.
  EngineRig rig(options, 1024, flashdir::format::RamPolicy::tree, 4 << 20);
  const auto data = pattern(5, 3000 * P);
  rig.put("f", data);
  CHECK(rig.read_through_in_small_fills("f", data.size()) == data);
  const std::uint64_t cached = rig.engine().stats().cached_pages;
  REQUIRE(cached >= 2900);
  CHECK(rig.engine().stats().commits >= 1);
  REQUIRE(rig.power_cycle().is_ok());
  const auto restart = rig.engine().stats().restart;
  // Each run of fills checks the bound: what is left after the last one is below it.
  CHECK(restart.dropped_slots < 64);
  CHECK(restart.usable_slots + restart.dropped_slots == cached);
}
