// Power cuts at seeded random chip operations, inside host writes, GC, translation-page
// writes, checkpoints and recovery itself; after each cut the chip is reopened and every LPN
// must read back a value the durability contract allows (ftl_harness / workload_driver).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>

#include "ftl_harness.h"
#include "support/seed.h"
#include "workload_driver.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// Records what each chip operation was about, so a test can say where its cuts landed.
class SpyChip final : public NandChip {
 public:
  explicit SpyChip(NandChip& inner, std::uint64_t pool_first_block) : inner_(inner), pool_(pool_first_block) {}
  const Geometry& geometry() const override { return inner_.geometry(); }
  bool stores_data() const override { return inner_.stores_data(); }
  std::string_view backend_name() const override { return inner_.backend_name(); }
  LatencyProfile latency() const override { return inner_.latency(); }
  Status read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override {
    last_ = "read";
    return inner_.read(first, count, data, oob);
  }
  Status program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override {
    auto record = format::decode_oob(oob.first(geometry().oob_size_bytes));
    last_ = !record.is_ok() ? "program ?"
            : record->kind == format::PageKind::translation ? "translation page"
            : record->kind == format::PageKind::checkpoint  ? "checkpoint"
            : record->aux == 2                              ? "GC copy"
            : record->aux == 4                              ? "consolidation"
                                                            : "host data";
    return inner_.program(first, count, data, oob);
  }
  Status erase(BlockNumber block) override {
    last_ = block.value < pool_ ? "checkpoint" : "GC erase";
    return inner_.erase(block);
  }
  Status sync() override { return inner_.sync(); }
  std::uint32_t next_page(BlockNumber block) const override { return inner_.next_page(block); }
  std::uint32_t erase_count(BlockNumber block) const override { return inner_.erase_count(block); }
  const ChipCounters& counters() const override { return inner_.counters(); }
  const std::string& last() const { return last_; }

 private:
  NandChip& inner_;
  std::uint64_t pool_;
  std::string last_;
};

struct CutStats {
  std::map<std::string, int> where;
  int cuts = 0;
  int during_recovery = 0;
};

// Reads every LPN of the logical space; returns the first value the oracle does not allow
// given the durable watermark at the cut, and settles the oracle to what was read.
std::string verify_and_settle(Ftl& ftl, const Geometry& g, Oracle& oracle, std::uint64_t durable) {
  std::vector<std::uint8_t> buffer(16 * g.page_size_bytes);
  std::vector<std::uint64_t> read(oracle.size());
  for (std::uint64_t first = 0; first < oracle.size(); first += 16) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(16, oracle.size() - first));
    const ByteSpan span = ByteSpan(buffer).first(std::size_t{count} * g.page_size_bytes);
    if (Status s = ftl.read(Lpn(first), count, span); !s.is_ok()) return s.to_string();
    for (std::uint32_t i = 0; i < count; ++i) {
      read[first + i] = version_of(first + i, span.subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes));
      if (!oracle.allows(first + i, read[first + i], durable)) {
        return fmt::format("LPN {} reads version {} which the contract does not allow (durable watermark {}; {})",
                           first + i, read[first + i], durable, oracle.describe(first + i));
      }
    }
  }
  for (std::uint64_t lpn = 0; lpn < read.size(); ++lpn) oracle.settle(lpn, read[lpn]);
  return {};
}

// The pool of the geometries used here starts after two one-block checkpoint slots.
constexpr std::uint64_t kPoolFirstBlock = 2;

// One run: format, then `cuts` times: run a workload on the faulty chip until the power goes;
// sometimes cut the power again during the recovery that follows; recover on a healthy chip
// and check every LPN.
void run_with_cuts(Backend backend, const FtlOptions& options, std::uint64_t seed, int cuts, CutStats& stats,
         const Geometry& g = small_ftl_geometry(), std::uint32_t longest_run = 6) {
  TestChip chip(backend, g);
  SeededRandom random(seed);
  std::uint64_t logical_pages = 0;
  {
    auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
    REQUIRE_OK(ftl);
    logical_pages = (*ftl)->logical_pages();
  }
  Oracle oracle(logical_pages);
  std::uint64_t durable = 0;  // the durable watermark last seen before the cut
  for (int cut = 0; cut < cuts; ++cut) {
    INFO("cut " << cut);
    std::uint64_t version = 0;  // the last sequence number handed out, or maybe handed out
    {
      auto ftl = Ftl::open(chip.chip(), chip.clock(), options);
      REQUIRE_OK(ftl);
      REQUIRE((*ftl)->durable_seq() >= durable);
      version = (*ftl)->durable_seq();
      REQUIRE(verify_and_settle(**ftl, g, oracle, durable) == "");
      durable = version;
      REQUIRE((*ftl)->recovery().dangling_mappings == 0);
      REQUIRE((*ftl)->recovery().shared_pages == 0);
    }
    FaultPlan plan;
    plan.seed = random.next_u64();
    plan.cut_one_in = 1200;
    FaultyChip faulty(chip.chip(), plan);
    SpyChip watched(faulty, kPoolFirstBlock);
    auto ftl = Ftl::open(watched, chip.clock(), options);
    if (!ftl.is_ok()) {  // the power went while opening
      REQUIRE(ftl.status().code() == StatusCode::power_lost);
      ++stats.cuts;
      stats.where["open: " + watched.last()]++;
      chip.reopen();
      continue;
    }
    while (!faulty.power_lost()) {
      const std::uint64_t choice = random.uniform(100);
      const auto count = static_cast<std::uint32_t>(random.between(1, longest_run));
      const std::uint64_t lpn = random.uniform(logical_pages - count + 1);
      if (choice < 75) {
        auto v = (*ftl)->write(Lpn(lpn), count, run_data(g, lpn, count, version + 1));
        if (v.is_ok()) {
          REQUIRE(*v == version + 1);
          version = *v;
          durable = (*ftl)->durable_seq();
          oracle.wrote(lpn, count, version);
        } else {
          REQUIRE(v.status().code() == StatusCode::power_lost);
          oracle.in_flight_write(lpn, count, version + 1);
        }
      } else if (choice < 88) {
        std::vector<std::uint8_t> buffer(std::size_t{count} * g.page_size_bytes);
        Status s = (*ftl)->read(Lpn(lpn), count, buffer);
        REQUIRE((s.is_ok() || s.code() == StatusCode::power_lost));
        if (s.is_ok()) durable = (*ftl)->durable_seq();
      } else if (choice < 95) {
        Status s = (*ftl)->trim(Lpn(lpn), count);
        if (s.is_ok()) {
          durable = (*ftl)->durable_seq();
          oracle.trimmed(lpn, count);
        } else {
          REQUIRE(s.code() == StatusCode::power_lost);
          oracle.in_flight_trim(lpn, count);
        }
      } else {
        Status s = (*ftl)->flush();
        if (s.is_ok()) {
          durable = (*ftl)->durable_seq();
          oracle.flushed();
        }
        else REQUIRE(s.code() == StatusCode::power_lost);
      }
    }
    ++stats.cuts;
    stats.where[watched.last()]++;
    ftl = Status::power_lost("dropped");
    chip.reopen();

    if (random.uniform(3) == 0) {  // and once more while recovering from it
      FaultPlan again;
      again.seed = random.next_u64();
      again.cut_at_operation = random.uniform(300);
      FaultyChip faulty_again(chip.chip(), again);
      SpyChip watched_again(faulty_again, kPoolFirstBlock);
      auto recovering = Ftl::open(watched_again, chip.clock(), options);
      if (!recovering.is_ok()) {
        REQUIRE(recovering.status().code() == StatusCode::power_lost);
        ++stats.during_recovery;
        stats.where["recovery: " + watched_again.last()]++;
      }
      recovering = Status::power_lost("dropped");
      chip.reopen();
    }
  }
  // A last recovery on a healthy chip, then a clean close and open.
  auto ftl = Ftl::open(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  REQUIRE(verify_and_settle(**ftl, g, oracle, durable) == "");
  REQUIRE_OK((*ftl)->close());
  ftl = Ftl::open(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  CHECK((*ftl)->recovery().clean);
  REQUIRE(verify_and_settle(**ftl, g, oracle, (*ftl)->durable_seq()) == "");
}

}  // namespace

TEST_CASE("power cuts anywhere keep the durability contract", "[ftl][powercut]") {
  const SeededRuns runs(1000);
  CutStats stats;
  int runs_done = 0;
  std::uint64_t run = 0;
  for (auto ram : kRamPolicies) {
    for (auto mapping : {format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page}) {
      for (auto gc : {format::GcPolicy::dual_greedy, format::GcPolicy::greedy, format::GcPolicy::cost_benefit}) {
        const std::uint64_t this_run = run++;
        if (!runs.selected(this_run)) continue;
        ++runs_done;
        const std::uint64_t seed = runs.seed(this_run);
        INFO(fmt::format("{} + {} + {} RAM, seed {}\nreplay: {}", format::mapping_scheme_name(mapping),
                         format::gc_policy_name(gc), format::ram_policy_name(ram), seed, runs.replay_command(this_run)));
        FtlOptions options = small_cache_options(mapping, gc, ram);
        options.checkpoint_interval_pages = 40;  // checkpoints at most flushes: cuts land in them too
        run_with_cuts(Backend::memory, options, seed, 12, stats);
      }
    }
  }
  std::string summary;
  for (const auto& [where, count] : stats.where) summary += fmt::format("{}: {}\n", where, count);
  fmt::print("{} power cuts ({} during recovery); operation in flight:\n{}", stats.cuts, stats.during_recovery, summary);
  INFO("cuts by operation in flight:\n" << summary);
  CHECK(stats.cuts == runs_done * 12);
  if (!runs.all_selected()) return;
  // The cuts must reach every step of the persistence protocol.
  for (const char* where : {"host data", "GC copy", "GC erase", "translation page", "checkpoint", "read"}) {
    INFO(where);
    CHECK(stats.where[where] >= 2);
  }
  CHECK(stats.during_recovery >= 1);
}

TEST_CASE("power cuts on the image backend", "[ftl][powercut]") {
  const std::uint64_t seed = test_seed(2000);
  INFO("seed " << seed << "\nreplay: " << replay_command(seed));
  CutStats stats;
  run_with_cuts(Backend::image, small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy), seed, 20, stats);
  CHECK(stats.cuts == 20);
}

TEST_CASE("power cuts on a chip of 4 KiB pages and 128-page blocks", "[ftl][powercut]") {
  const SeededRuns runs(3000);
  CutStats stats;
  int runs_done = 0;
  std::uint64_t run = 0;
  for (auto ram : kRamPolicies) {
    for (auto mapping : {format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page}) {
      const std::uint64_t this_run = run++;
      if (!runs.selected(this_run)) continue;
      ++runs_done;
      const std::uint64_t seed = runs.seed(this_run);
      INFO(fmt::format("{} + {} RAM, seed {}\nreplay: {}", format::mapping_scheme_name(mapping),
                       format::ram_policy_name(ram), seed, runs.replay_command(this_run)));
      FtlOptions options;  // a 64 KiB device RAM, automatic checkpoint interval
      options.mapping = mapping;
      options.ram.policy = ram;
      run_with_cuts(Backend::memory, options, seed, 6, stats, Geometry{4096, 64, 128, 96}, 16);
    }
  }
  CHECK(stats.cuts == runs_done * 6);
}
