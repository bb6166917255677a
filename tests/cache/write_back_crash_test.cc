// A crash oracle for write-back: seeded workloads of whole-page writes, reads, fsyncs and
// releases over several files, cut at a random chip operation (FaultyChip); after recovery
// every page holds a version the oracle allows: the one last fsync'd or one written after it.
#include <catch2/catch.hpp>

#include "engine_rig.h"
#include "flashdir/random.h"
#include "support/seed.h"

using flashdir::FaultPlan;
using flashdir::SeededRandom;
using flashdir::cache::EngineOptions;
using flashdir::cache::FileHandle;
using flashdir::cache::MetadataScheme;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

constexpr int kFiles = 4;
constexpr std::uint64_t kPages = 24;

// Version v of page p of file f: distinct for every (f, p, v).
std::vector<std::uint8_t> page_bytes(int f, std::uint64_t page, std::uint64_t version, std::uint32_t page_size) {
  return pattern(version * 1000 + static_cast<std::uint64_t>(f) * 100 + page, page_size, page * page_size);
}

struct Oracle {
  // Per file and page: the versions a read may return (the durable one first).
  std::vector<std::vector<std::vector<std::uint64_t>>> allowed;
  std::vector<std::vector<std::uint64_t>> current;
  Oracle()
      : allowed(kFiles, std::vector<std::vector<std::uint64_t>>(kPages, {0})),
        current(kFiles, std::vector<std::uint64_t>(kPages, 0)) {}
  void wrote(int f, std::uint64_t page, std::uint64_t version) {
    current[f][page] = version;
    allowed[f][page].push_back(version);
  }
  void synced(int f) {
    for (std::uint64_t page = 0; page < kPages; ++page) allowed[f][page] = {current[f][page]};
  }
};

}  // namespace

TEST_CASE("write-back crash oracle: fsync'd pages survive a cut at any chip operation, no read returns a version never allowed") {
  flashdir::testing::SeededRuns runs(0x5eedb0c);
  const std::uint64_t run_count = flashdir::testing::test_knob("FLASHDIR_CACHE_CRASH_RUNS", 12);
  for (std::uint64_t run = 0; run < run_count; ++run) {
    if (!runs.selected(run)) continue;
    const MetadataScheme scheme = run % 3 == 0 ? MetadataScheme::write_update : MetadataScheme::lufuw;
    const auto ram = flashdir::testing::kRamPolicies[run % std::size(flashdir::testing::kRamPolicies)];
    INFO("replay: " << runs.replay_command(run) << " scheme " << flashdir::cache::metadata_scheme_name(scheme));
    SeededRandom random(runs.seed(run));
    EngineOptions options;
    options.write_mode = WriteMode::write_back;
    options.metadata = scheme;
    options.flush_batch_pages = 4;
    options.dirty_high_watermark_percent = 20;
    options.dirty_low_watermark_percent = 10;
    EngineRig rig(options, 64, ram);
    const std::uint32_t P = rig.page_size();
    Oracle oracle;
    for (int f = 0; f < kFiles; ++f) {
      std::vector<std::uint8_t> bytes;
      for (std::uint64_t page = 0; page < kPages; ++page) {
        const auto one = page_bytes(f, page, 0, P);
        bytes.insert(bytes.end(), one.begin(), one.end());
      }
      rig.put("f" + std::to_string(f), bytes);
    }
    // The next run of the engine is cut at a random chip operation (the cut may also land in
    // the restart's own recovery).
    FaultPlan plan;
    plan.seed = runs.seed(run);
    plan.cut_one_in = 400 + random.uniform(1500);
    REQUIRE(rig.power_cycle(plan).is_ok());
    std::vector<FileHandle> files;
    for (int f = 0; f < kFiles; ++f) files.push_back(rig.engine().open_file("f" + std::to_string(f)).value());
    std::uint64_t version = 1;
    std::vector<std::uint8_t> read(P);
    for (int op = 0; op < 3000 && !rig.power_lost(); ++op) {
      const int f = static_cast<int>(random.uniform(kFiles));
      const std::uint64_t page = random.uniform(kPages);
      const std::uint64_t dice = random.uniform(100);
      if (dice < 55) {
        // Allowed from the call on: a write the cut interrupts may have reached the cache.
        const std::uint64_t v = version++;
        oracle.wrote(f, page, v);
        if (!rig.engine().write(files[f], page * P, page_bytes(f, page, v, P)).is_ok()) break;
      } else if (dice < 90) {
        if (!rig.engine().read(files[f], page * P, read).is_ok()) break;
        CHECK(read == page_bytes(f, page, oracle.current[f][page], P));
      } else if (dice < 97) {
        if (!rig.engine().fsync(files[f]).is_ok()) break;
        oracle.synced(f);
      } else {
        // A release writes the file's pages back: all of it is in the backing file then.
        if (!rig.engine().release(files[f]).is_ok()) break;
        oracle.synced(f);
        auto reopened = rig.engine().open_file("f" + std::to_string(f));
        if (!reopened.is_ok()) break;
        files[f] = *reopened;
      }
    }
    // Power back on (a clean chip), recovery, then every page checked through the engine and,
    // after a clean close, in the backing files.
    const flashdir::Status recovered = rig.power_cycle();
    INFO(recovered.to_string());
    REQUIRE(recovered.is_ok());
    CHECK(rig.engine().stats().restart.lost_dirty_slots == 0);
    for (int pass = 0; pass < 2; ++pass) {
      for (int f = 0; f < kFiles; ++f) {
        const auto bytes = pass == 0 ? rig.read_through("f" + std::to_string(f), 0, kPages * P)
                                     : rig.get("f" + std::to_string(f));
        REQUIRE(bytes.size() == kPages * P);
        for (std::uint64_t page = 0; page < kPages; ++page) {
          const std::vector<std::uint8_t> got(bytes.begin() + static_cast<std::ptrdiff_t>(page * P),
                                              bytes.begin() + static_cast<std::ptrdiff_t>((page + 1) * P));
          bool allowed = false;
          for (std::uint64_t v : oracle.allowed[f][page]) allowed = allowed || got == page_bytes(f, page, v, P);
          INFO("pass " << pass << " file " << f << " page " << page);
          CHECK(allowed);
        }
      }
      if (pass == 0) REQUIRE(rig.restart().is_ok());
    }
  }
}
