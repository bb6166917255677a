// A seeded differential test of the engine against the backing file it fronts: writes,
// appends, truncates and reads through the engine, in each write mode, among changes made
// behind it (appends and truncates, which change the size, while the file is open; any rewrite
// while it is closed). While the file is open the engine may lag such a change (doc/cache.md
// "Files, staleness and the catalog": what its writes after the first of a run do not check);
// after each last release every byte it serves must be the backing file's. It found the page a
// write-back left cached, holding zeros, in a file grown behind the engine past its dirty last
// page, and the writes after the first of a run whose new size hid a change of size behind the
// engine (check_before_write).
#include <unistd.h>

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "engine_rig.h"
#include "flashdir/random.h"
#include "support/seed.h"

using flashdir::SeededRandom;
using flashdir::cache::EngineOptions;
using flashdir::cache::FileHandle;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

TEST_CASE("behind changes: after each last release the engine serves exactly what the backing file holds") {
  constexpr WriteMode kModes[] = {WriteMode::write_through, WriteMode::write_around, WriteMode::write_back};
  flashdir::testing::SeededRuns runs(0xbe41d0);
  const std::uint64_t run_count = flashdir::testing::test_knob("FLASHDIR_BEHIND_CHANGES_RUNS", 24);
  std::uint64_t closes = 0;
  for (std::uint64_t run = 0; run < run_count; ++run) {
    if (!runs.selected(run)) continue;
    EngineOptions options;
    options.write_mode = kModes[run % std::size(kModes)];
    INFO("replay: " << runs.replay_command(run) << " write mode " << static_cast<int>(options.write_mode));
    SeededRandom random(runs.seed(run));
    EngineRig rig(options);
    const std::uint32_t P = rig.page_size();
    std::uint64_t version = 1;
    rig.put("f", pattern(version, random.uniform(3 * P)));
    std::optional<FileHandle> file;
    std::vector<std::uint8_t> buffer;
    for (int op = 0; op < 300; ++op) {
      const std::uint64_t dice = random.uniform(100);
      INFO("operation " << op << ", dice " << dice);
      ++version;
      if (!file) {
        if (dice < 30) rig.put("f", pattern(version, random.uniform(4 * P)));  // rewritten while closed
        file = rig.engine().open_file("f").value();
        continue;
      }
      const std::uint64_t size = rig.engine().size(*file).value();
      if (dice < 25) {
        const auto bytes = pattern(version, random.between(1, 2 * P));
        REQUIRE(rig.engine().write(*file, random.uniform(size + P), bytes).is_ok());
      } else if (dice < 45) {
        REQUIRE(rig.engine().append(*file, pattern(version, random.between(1, P))).is_ok());
      } else if (dice < 60) {
        buffer.resize(random.between(1, 2 * P));
        REQUIRE(rig.engine().read(*file, random.uniform(size + 1), buffer).is_ok());
      } else if (dice < 66) {
        rig.append("f", pattern(version, random.between(1, P)));
      } else if (dice < 70) {
        REQUIRE(::truncate(rig.backing_path("f").c_str(), static_cast<off_t>(random.uniform(size + P))) == 0);
      } else if (dice < 75) {
        REQUIRE(rig.engine().truncate(*file, random.uniform(size + P)).is_ok());
      } else {
        REQUIRE(rig.engine().release(*file).is_ok());
        file.reset();
        ++closes;
        const auto backing = rig.get("f");
        REQUIRE(rig.read_through("f", 0, backing.size() + P) == backing);
      }
    }
    if (file) REQUIRE(rig.engine().release(*file).is_ok());
    const auto backing = rig.get("f");
    CHECK(rig.read_through("f", 0, backing.size() + P) == backing);
  }
  if (runs.all_selected()) CHECK(closes > run_count * 10);  // the runs did close, and check
}
