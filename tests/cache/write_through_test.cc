// Write-through's pages stored behind the write (EngineOptions::store_writes_behind): until the
// next write, read, check or release of the file stores them, the cache may still hold the
// range's previous bytes; nothing may ever serve those.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>

#include "engine_rig.h"
#include "flashdir/random.h"
#include "support/seed.h"

using flashdir::SeededRandom;
using flashdir::cache::EngineOptions;
using flashdir::testing::EngineRig;
using flashdir::testing::apply;
using flashdir::testing::pattern;

namespace {

EngineOptions storing_behind() {
  EngineOptions options;
  options.store_writes_behind = true;
  options.write_sequential_cutoff_bytes = 0;
  return options;
}

}  // namespace

TEST_CASE("write-through: a large write's pages go into the cache behind it, with the next write") {
  EngineRig rig(storing_behind());
  const std::uint32_t P = rig.page_size();
  rig.put("f", {});
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, 0, pattern(1, 32 * P)).is_ok());
  CHECK(rig.get("f") == pattern(1, 32 * P));     // acknowledged: the backing file has it
  CHECK(rig.engine().stats().cached_pages == 0);  // the cache not yet
  REQUIRE(rig.engine().write(*file, 32 * P, pattern(2, 32 * P, 32 * P)).is_ok());
  CHECK(rig.engine().stats().cached_pages == 32);  // the first write's, stored with the second
  std::vector<std::uint8_t> read(64 * P);
  REQUIRE(rig.engine().read(*file, 0, read).is_ok());
  CHECK(rig.engine().stats().cached_pages == 64);  // the read stored the second's first
  CHECK(rig.engine().stats().read_hit_pages == 64);
  auto model = pattern(1, 32 * P);
  apply(model, 32 * P, pattern(2, 32 * P, 32 * P));
  CHECK(read == model);
  REQUIRE(rig.engine().release(*file).is_ok());
}

TEST_CASE("write-through: pages stored behind never let a read, write, append or truncate see the range's old bytes") {
  flashdir::testing::SeededRuns runs(0x57eb1d);
  for (std::uint64_t run = 0; run < 8; ++run) {
    if (!runs.selected(run)) continue;
    INFO("replay: " << runs.replay_command(run));
    SeededRandom random(runs.seed(run));
    EngineRig rig(storing_behind());
    const std::uint32_t P = rig.page_size();
    auto model = pattern(100 + run, 40 * P + 123);
    rig.put("f", model);
    auto file = rig.engine().open_file("f");
    REQUIRE(file.is_ok());
    std::vector<std::uint8_t> read(model.size());
    REQUIRE(rig.engine().read(*file, 0, read).is_ok());  // every page cached with its old bytes
    for (std::uint32_t step = 0; step < 200; ++step) {
      INFO("step " << step);
      const std::uint64_t offset = random.uniform(model.size() + 2 * P);
      switch (random.uniform(5)) {
        case 0:
        case 1: {  // large (stored behind) or small, aligned or not
          const std::size_t length = random.one_in(2) ? random.between(16 * P, 24 * P) : random.between(1, 2 * P);
          const auto bytes = pattern(1000 * run + step, length);
          REQUIRE(rig.engine().write(*file, offset, bytes).is_ok());
          apply(model, offset, bytes);
          break;
        }
        case 2: {
          const auto bytes = pattern(1000 * run + step, random.between(1, 20 * P));
          REQUIRE(rig.engine().append(*file, bytes).is_ok());
          model.insert(model.end(), bytes.begin(), bytes.end());
          break;
        }
        case 3: {
          const std::uint64_t size = random.uniform(64 * P);
          REQUIRE(rig.engine().truncate(*file, size).is_ok());
          model.resize(size, 0);
          break;
        }
        default: {
          std::vector<std::uint8_t> got(random.between(1, 30 * P));
          auto n = rig.engine().read(*file, offset, got);
          REQUIRE(n.is_ok());
          const std::size_t expected = offset >= model.size() ? 0 : std::min(got.size(), model.size() - offset);
          REQUIRE(*n == expected);
          got.resize(*n);
          CHECK(got == std::vector<std::uint8_t>(model.begin() + static_cast<std::ptrdiff_t>(offset),
                                                 model.begin() + static_cast<std::ptrdiff_t>(offset + expected)));
        }
      }
    }
    read.assign(model.size(), 0);
    REQUIRE(rig.engine().read(*file, 0, read).is_ok());
    CHECK(read == model);
    REQUIRE(rig.engine().release(*file).is_ok());
    CHECK(rig.get("f") == model);
    CHECK(rig.read_through("f", 0, model.size() + 1) == model);  // what the cache keeps after the close
  }
}

TEST_CASE("write-through: a power cut while a write's pages wait to go into the cache serves the backing file's bytes") {
  EngineRig rig(storing_behind());
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 40 * P));
  CHECK(rig.read_through("f", 0, 40 * P) == pattern(1, 40 * P));  // cached, old bytes
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, 4 * P, pattern(2, 20 * P)).is_ok());  // acknowledged, not yet in the cache
  REQUIRE(rig.engine().commit().is_ok());
  auto model = pattern(1, 40 * P);
  apply(model, 4 * P, pattern(2, 20 * P));
  REQUIRE(rig.power_cycle().is_ok());
  CHECK(rig.get("f") == model);
  CHECK(rig.read_through("f", 0, 40 * P) == model);
}

TEST_CASE("write-through: a write the backing refuses, while the last one's pages go into the cache, leaves none of its range cached") {
  EngineRig rig(storing_behind());
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 40 * P));
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> read(40 * P);
  REQUIRE(rig.engine().read(*file, 0, read).is_ok());  // cached, old bytes
  REQUIRE(rig.engine().write(*file, 0, pattern(2, 20 * P)).is_ok());
  rig.backing_faults().write_errno = EIO;
  CHECK_FALSE(rig.engine().write(*file, 10 * P, pattern(3, 20 * P)).is_ok());
  rig.backing_faults().write_errno = 0;
  // The last write's pages went in first, then the refused range left: 0-9 and 30-39 stay (a
  // store after the drop would have brought 10-19 back).
  CHECK(rig.engine().stats().cached_pages == 20);
  // Whatever the refused write left in the backing file, the cache answers for none of it.
  REQUIRE(rig.engine().read(*file, 0, read).is_ok());
  CHECK(read == rig.get("f"));
  REQUIRE(rig.engine().release(*file).is_ok());
}
