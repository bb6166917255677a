// A crash oracle for write-back: seeded workloads of whole-page writes (half of them
// sequential: streams going back behind their writer), reads, fsyncs, closes (with and without
// a write-back delay), truncates and renames over many files, on a cache smaller than the files
// (so that clean pages are evicted), cut at a random chip operation (FaultyChip); half the runs cut the
// restart too, some operations into its repairs, write-back and drops, before a clean restart.
// After recovery every page holds a version the oracle allows (the one last made durable — by
// fsync, release or truncate — or one written after it), through the engine and, after a
// clean close, in the backing file. Every metadata scheme, every RAM policy.
//
// Knobs: FLASHDIR_CACHE_CRASH_RUNS (runs, default 12), FLASHDIR_TEST_SEED, FLASHDIR_TEST_RUN.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

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

constexpr int kFiles = 16;
constexpr std::uint64_t kMaxPages = 24;     // a file never grows past this
constexpr std::uint64_t kInitialPages = 16;
constexpr std::uint64_t kAbsent = UINT64_MAX;  // a page past the end, or a hole: reads as zeros

// Version v of page p of file f: distinct for every (f, p, v), never all zeros.
std::vector<std::uint8_t> page_bytes(int f, std::uint64_t page, std::uint64_t version, std::uint32_t page_size) {
  return pattern(version * 1000 + static_cast<std::uint64_t>(f) * 100 + page + 1, page_size, page * page_size);
}

// Whether `got` (the page's bytes as read, short or empty past the end) is `version`.
bool holds(std::span<const std::uint8_t> got, int f, std::uint64_t page, std::uint64_t version, std::uint32_t P) {
  if (version == kAbsent) return std::all_of(got.begin(), got.end(), [](std::uint8_t b) { return b == 0; });
  const auto want = page_bytes(f, page, version, P);
  return got.size() == want.size() && std::equal(got.begin(), got.end(), want.begin());
}

struct FileModel {
  std::string name;
  // Per page: the versions a read after a cut may find (the durable one first), and the last.
  std::vector<std::vector<std::uint64_t>> allowed;
  std::vector<std::uint64_t> current;
  std::uint64_t next_page = 0;  // where a sequential write goes on

  explicit FileModel(std::string file_name)
      : name(std::move(file_name)), allowed(kMaxPages), current(kMaxPages, kAbsent) {
    for (std::uint64_t page = 0; page < kMaxPages; ++page) {
      current[page] = page < kInitialPages ? 0 : kAbsent;
      allowed[page] = {current[page]};
    }
  }
  // Allowed from the call on: a write the cut interrupts may have reached the cache.
  void may_become(std::uint64_t page, std::uint64_t version) {
    allowed[page].push_back(version);
    current[page] = version;
  }
  // Everything is durable as it stands now.
  void durable() {
    for (std::uint64_t page = 0; page < kMaxPages; ++page) allowed[page] = {current[page]};
  }
};

EngineOptions crash_options(std::uint64_t run) {
  EngineOptions options;
  options.write_mode = WriteMode::write_back;
  const MetadataScheme schemes[] = {MetadataScheme::lufuw, MetadataScheme::write_update,
                                    MetadataScheme::update_write_update};
  options.metadata = schemes[run % 3];
  options.flush_batch_pages = 4;
  // Streams of two pages go back behind their writer (the rig's pages are 512 bytes), and every
  // other pair of schemes' runs closes with a delay: the flusher writes files back after their
  // close, beside the releases, fsyncs and truncates.
  options.write_back_stream_bytes = 2 * 512;
  options.write_back_delay_ms = (run / 3) % 2 == 0 ? 0 : 20;
  // Drains of 3 pages a batch, each read while the last goes back, synced every 7 pages in half
  // the runs and after every batch in the others.
  options.write_back_drain_batch_bytes = 3 * 512;
  options.write_back_drain_sync_bytes = ((run / 6) % 2 == 0 ? 7 : 1) * 512;
  options.dirty_high_watermark_percent = 20;
  options.dirty_low_watermark_percent = 10;
  return options;
}

}  // namespace

TEST_CASE("write-back crash oracle: writes, truncates, renames and evictions cut anywhere, restarts cut too; every durable page survives, no read returns a version never allowed") {
  flashdir::testing::SeededRuns runs(0x5eedb0c);
  const std::uint64_t run_count = flashdir::testing::test_knob("FLASHDIR_CACHE_CRASH_RUNS", 12);
  std::uint64_t evictions = 0, restart_cuts = 0, delayed_write_backs = 0;
  for (std::uint64_t run = 0; run < run_count; ++run) {
    if (!runs.selected(run)) continue;
    const EngineOptions options = crash_options(run);
    const auto ram = flashdir::testing::kRamPolicies[run % std::size(flashdir::testing::kRamPolicies)];
    INFO("replay: " << runs.replay_command(run) << " scheme " << flashdir::cache::metadata_scheme_name(options.metadata));
    SeededRandom random(runs.seed(run));
    // 16 blocks of 16 512-byte pages: far fewer slots than the files' pages (up to 384).
    EngineRig rig(options, 16, ram);
    const std::uint32_t P = rig.page_size();
    std::vector<FileModel> model;
    for (int f = 0; f < kFiles; ++f) {
      model.emplace_back("f" + std::to_string(f));
      std::vector<std::uint8_t> bytes;
      for (std::uint64_t page = 0; page < kInitialPages; ++page) {
        const auto one = page_bytes(f, page, 0, P);
        bytes.insert(bytes.end(), one.begin(), one.end());
      }
      rig.put(model[f].name, bytes);
    }
    // The next run of the engine is cut at a random chip operation.
    FaultPlan plan;
    plan.seed = runs.seed(run);
    plan.cut_one_in = 1000 + random.uniform(4000);
    // The cut may come in that engine's open itself: then no operation runs, and the recovery
    // below is all there is to check.
    const flashdir::Status opened = rig.power_cycle(plan);
    if (!opened.is_ok()) REQUIRE(rig.power_lost());
    std::vector<FileHandle> files;
    for (int f = 0; opened.is_ok() && f < kFiles; ++f) files.push_back(rig.engine().open_file(model[f].name).value());
    std::uint64_t version = 1;
    int renames = 0;
    std::vector<std::uint8_t> read(P);
    for (int op = 0; op < 4000 && !rig.power_lost(); ++op) {
      const int f = static_cast<int>(random.uniform(kFiles));
      FileModel& file = model[f];
      const std::uint64_t page = random.uniform(kMaxPages);
      const std::uint64_t dice = random.uniform(100);
      if (dice < 45) {
        // Half the writes go on where the file's last one ended: sequential streams.
        const std::uint64_t at = random.uniform(2) == 0 ? file.next_page % kMaxPages : page;
        file.next_page = at + 1;
        const std::uint64_t v = version++;
        file.may_become(at, v);
        if (!rig.engine().write(files[f], at * P, page_bytes(f, at, v, P)).is_ok()) break;
      } else if (dice < 78) {
        auto got = rig.engine().read(files[f], page * P, read);
        if (!got.is_ok()) break;
        INFO("file " << f << " page " << page);
        CHECK(holds(std::span(read).first(*got), f, page, file.current[page], P));
      } else if (dice < 86) {
        if (!rig.engine().fsync(files[f]).is_ok()) break;
        file.durable();
      } else if (dice < 90) {
        // A close: the file's pages are in the backing file then, or with a delay durable in the
        // cache, the flusher writing them back a delay later.
        if (!rig.engine().write_back_at_close(files[f]).is_ok()) break;
        if (!rig.engine().release(files[f]).is_ok()) break;
        file.durable();
        auto reopened = rig.engine().open_file(file.name);
        if (!reopened.is_ok()) break;
        files[f] = *reopened;
      } else if (dice < 96) {
        // Whole pages: the pages from `page` on go; the dirty ones before it go back first.
        for (std::uint64_t gone = page; gone < kMaxPages; ++gone) file.may_become(gone, kAbsent);
        if (!rig.engine().truncate(files[f], page * P).is_ok()) break;
        file.durable();
      } else {
        // An open file renamed: its pages, dirty ones included, follow it to the new name.
        const std::string to = "r" + std::to_string(renames++) + "-" + std::to_string(f);
        const flashdir::Status renamed = rig.engine().rename(file.name, to);
        if (std::filesystem::exists(rig.backing_path(to))) file.name = to;
        if (!renamed.is_ok()) break;
      }
    }
    if (opened.is_ok()) {
      evictions += rig.engine().stats().evicted_pages;
      delayed_write_backs += rig.engine().stats().delayed_write_backs;
    }
    INFO("cut: " << (rig.power_lost() ? "yes" : "no (the run ended first)"));
    // Half the runs cut the restart as well, a few operations into the engine's part of it.
    if (random.uniform(2) == 0) {
      const flashdir::Status cut_restart = rig.power_cycle_cut_in_restart(random.uniform(30));
      if (!cut_restart.is_ok()) {
        REQUIRE(rig.power_lost());
        ++restart_cuts;
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
        const auto bytes = pass == 0 ? rig.read_through(model[f].name, 0, kMaxPages * P) : rig.get(model[f].name);
        REQUIRE(bytes.size() <= kMaxPages * P);
        for (std::uint64_t page = 0; page < kMaxPages; ++page) {
          const std::size_t from = std::min<std::size_t>(bytes.size(), page * P);
          const std::size_t to = std::min<std::size_t>(bytes.size(), (page + 1) * P);
          const std::span<const std::uint8_t> got(bytes.data() + from, to - from);
          bool allowed = false;
          for (std::uint64_t v : model[f].allowed[page]) allowed = allowed || holds(got, f, page, v, P);
          INFO("pass " << pass << " file " << f << " (" << model[f].name << ") page " << page);
          CHECK(allowed);
        }
      }
      if (pass == 0) REQUIRE(rig.restart().is_ok());
    }
  }
  // The workloads did what they are for: evictions, delayed write-backs, and restarts that were cut (over all the
  // runs: a replay of one run need not have either).
  if (run_count >= 12 && runs.all_selected()) {
    CHECK(evictions > 0);
    CHECK(delayed_write_backs > 0);
    CHECK(restart_cuts > 0);
  }
}
