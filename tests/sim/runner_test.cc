// End to end: plan and run configurations on synthetic workloads and on a real trace.
#include <catch2/catch.hpp>

#include <filesystem>

#include "flashdir/sim/runner.h"
#include "flashdir/sim/simulation.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

Trace synthetic(const std::string& text) {
  auto spec = parse_synthetic(text);
  INFO(text << ": " << spec.status().to_string());
  REQUIRE(spec.is_ok());
  auto trace = generate(*spec);
  REQUIRE(trace.is_ok());
  return std::move(trace).value();
}

// Plans `config` alone on `trace` and runs it.
RunResult run(const Trace& trace, const SimConfig& config) {
  Variant variant;
  variant.config = config;
  auto plan = plan_simulation(trace, {variant});
  INFO(plan.status().to_string());
  REQUIRE(plan.is_ok());
  const PlannedRun& planned = plan->runs[0];
  auto result =
      run_configuration(planned.variant.config, planned.geometry, plan->traces[planned.trace_index]);
  INFO(result.status().to_string());
  REQUIRE(result.is_ok());
  return std::move(result).value();
}

SimConfig with(std::initializer_list<std::pair<const char*, const char*>> settings) {
  SimConfig config;
  for (const auto& [key, value] : settings) {
    INFO(key << "=" << value);
    REQUIRE(config.set(key, value).is_ok());
  }
  return config;
}

constexpr const char* kSmall = "uniform,read=0.5,ws=8M,count=3000,seed=11";

}  // namespace

TEST_CASE("runner: every mapping scheme collects garbage after prefill and aging", "[sim][runner]") {
  const Trace trace = synthetic(kSmall);
  for (const char* mapping : {"cftl", "dftl", "page"}) {
    INFO(mapping);
    const RunResult r = run(trace, with({{"mapping", mapping}, {"ram-policy", "static:100"}}));
    CHECK(r.requests == 3000);
    CHECK(r.reads + r.writes == 3000);
    CHECK(r.reads == trace.reads);
    CHECK(r.stats.read_requests == r.reads);  // nothing was cut
    CHECK(r.stats.write_requests == r.writes);
    CHECK(r.stats.write_pages == r.writes);
    CHECK(r.stats.gc_runs > 0);
    CHECK(r.stats.chip_block_erases > 0);
    CHECK(r.stats.write_amplification() >= 1.0);
    CHECK(r.prefill_requests == (r.logical_pages + 127) / 128);
    CHECK(r.aging_pages == r.logical_pages);
    CHECK(r.total_requests == r.prefill_requests + r.aging_requests + 3000);
    CHECK(r.replay_erases.max >= 1);
    CHECK(r.end_erases.mean >= r.replay_erases.mean);
    // Synthetic arrivals are all at 0: closed loop, so response = service.
    CHECK(r.closed_loop);
    CHECK(r.service_ns > 0);
    CHECK(r.response_ns == r.service_ns);
    CHECK(r.mean_service_us() > 0);
    CHECK(r.replay_wall_seconds > 0);
    CHECK(r.replay_requests_per_second() > 0);
  }
}

TEST_CASE("runner: the translation-page I/O GC causes is counted apart from the host's", "[sim][runner]") {
  const Trace trace = synthetic(kSmall);
  for (const char* mapping : {"cftl", "dftl"}) {
    for (const char* policy : {"tree", "stack", "static:100", "aps"}) {
      INFO(mapping << " " << policy);
      const RunResult r = run(trace, with({{"mapping", mapping}, {"ram", "16K"}, {"ram-policy", policy}}));
      REQUIRE(r.stats.gc_runs > 0);
      // With a cache far smaller than the map, the write-backs of the pages GC's relocations
      // dirtied are GC's, wherever they happen (doc/ftl.md); host lookups miss too.
      CHECK(r.stats.gc_translation_page_writes > 0);
      CHECK(r.stats.gc_translation_page_reads > 0);
      CHECK(r.stats.gc_translation_page_reads < r.stats.translation_page_reads);
      CHECK(r.stats.gc_translation_page_writes <= r.stats.translation_page_writes);
      // GC's copies of translation pages are among the writes it causes.
      CHECK(r.stats.gc_translation_page_writes >= r.stats.gc_translation_copies);
    }
  }
  // The page scheme keeps its whole map in RAM: no translation-page reads, by the host or GC.
  const RunResult page = run(trace, with({{"mapping", "page"}}));
  CHECK(page.stats.gc_runs > 0);
  CHECK(page.stats.gc_translation_page_reads == 0);
}

TEST_CASE("runner: GC's mapping updates cost a translation-page write per page, not per relocated LPN",
          "[sim][runner][gc]") {
  // Random 512-byte writes over a map of 285 translation pages (128 entries each), greedy GC,
  // 64K of RAM: a victim's relocated pages belong to many translation pages, most not cached.
  // TreeFTL used to read every such page during the GC run and write it back when the request
  // settled: a read and a write for every tenth relocated page. Its relocation log (on here; off
  // by default, doc/ram.md) waits until a page collects several moves (or the host loads it
  // anyway). The entry caches take
  // relocations as dirty entries and write them back a page at a time (DFTL's batch update).
  const Trace trace = synthetic("uniform,read=0,ws=16M,count=20000,size=512,seed=5");
  for (const char* policy : {"tree", "static:100", "aps"}) {
    INFO(policy);
    const RunResult r = run(trace, with({{"mapping", "dftl"}, {"page-size", "512"}, {"ram", "64K"},
                                         {"ram-policy", policy}, {"gc", "greedy"}, {"age", "0.2"},
                                         {"relocation-log", "on"}}));
    REQUIRE(r.stats.gc_data_copies > 50000);
    // What relocations cost: GC's translation I/O beyond its copies of translation pages.
    const std::uint64_t reads = r.stats.gc_translation_page_reads - r.stats.gc_translation_copies;
    const std::uint64_t writes = r.stats.gc_translation_page_writes - r.stats.gc_translation_copies;
    INFO("GC data copies " << r.stats.gc_data_copies << ", relocation reads " << reads << ", writes " << writes);
    CHECK(reads * 20 < r.stats.gc_data_copies);
    CHECK(writes * 20 < r.stats.gc_data_copies);
  }
}

TEST_CASE("runner: under stack, CFTL's runs spare the translation reads DFTL's entries cost; tree caches pages alike",
          "[sim][runner][stack]") {
  // Sequential reads over a 256 MiB space written in order (prefill, no aging), 16 KiB of RAM:
  // 64 translation pages, each one run of consecutive mappings.
  const Trace trace = synthetic("seq,read=1,ws=256M,count=20000,seed=3");
  const auto reads = [&](const char* policy, const char* mapping) {
    const RunResult r = run(trace, with({{"ram-policy", policy}, {"mapping", mapping}, {"ram", "16K"}, {"age", "0"}}));
    return r.stats.translation_page_reads;
  };
  // A CFTL run costs 12 bytes: the whole map fits. A DFTL entry covers one LPN, so each page
  // costs misses until the group takes it whole; a TreeFTL page costs 4 KiB in either scheme.
  // Beside its pages CFTL keeps CBMT entries: each block turns read-hot halfway through its
  // read and, laid out whole, is block-mapped for free (154 blocks, 8 bytes each, 1.2 KiB of
  // the 16 KiB): one translation page evicted the more.
  CHECK(reads("stack", "cftl") * 4 < reads("stack", "dftl"));
  CHECK(reads("tree", "cftl") >= reads("tree", "dftl"));
  CHECK(reads("tree", "cftl") <= reads("tree", "dftl") + 1);
  CHECK(reads("stack", "cftl") < reads("tree", "cftl"));
}

TEST_CASE("runner: CFTL block-maps the read-hot blocks the prefill laid out whole; after the aging only copies do",
          "[sim][runner][cftl]") {
  // Read-only, uniform over 8 MiB: each of its 16 logical blocks turns read-hot and write-cold,
  // as wsrch's hottest do (doc/ftl.md "Block mapping in the simulator").
  const Trace trace = synthetic("uniform,read=1,ws=8M,count=5000,size=16K,seed=3");
  constexpr std::uint64_t kLogicalBlocks = 16;
  // The prefill writes each logical block whole into one physical block: every one is
  // block-mapped for free by the read that makes it wanted.
  const RunResult laid_out = run(trace, with({{"age", "0"}}));
  CHECK(laid_out.stats.conversions_to_block == kLogicalBlocks);
  CHECK(laid_out.stats.consolidation_copies == 0);
  CHECK(laid_out.stats.cbmt_hits > laid_out.stats.cbmt_lookups / 2);
  // The aging's random runs of 1-16 pages scatter every logical block, and a read-only replay
  // runs no GC, so consolidation `gc` (the default) never gets a victim to copy from.
  const RunResult aged = run(trace, with({}));
  CHECK(aged.stats.gc_runs == 0);
  CHECK(aged.stats.conversions_to_block == 0);
  CHECK(aged.stats.cbmt_hits == 0);
  // `eager` copies them whole in the background, at the cost of the copies and their GC.
  const RunResult eager = run(trace, with({{"consolidation", "eager"}}));
  CHECK(eager.stats.conversions_to_block == kLogicalBlocks);
  CHECK(eager.stats.consolidation_copies > 0);
  CHECK(eager.stats.cbmt_hits > 0);
  CHECK(eager.mean_service_us() > aged.mean_service_us());
}

TEST_CASE("runner: every RAM policy buffers writes and keeps to its budget", "[sim][runner]") {
  const Trace trace = synthetic("zipf:0.9,read=0.5,ws=8M,count=3000,seed=12");
  for (const char* policy : {"tree", "stack", "aps", "static:50"}) {
    INFO(policy);
    const RunResult r = run(trace, with({{"ram-policy", policy}, {"ram", "256K"}, {"aps-interval", "200"}}));
    CHECK(r.stats.buffer_write_lookups > 0);
    CHECK(r.stats.buffer_write_hits > 0);  // Zipf rewrites hot pages while they are buffered
    CHECK(r.stats.evicted_data_pages > 0);
    CHECK(r.stats.ram_peak_mapping_bytes + r.stats.ram_peak_buffer_bytes > 0);
    CHECK(r.stats.ram_peak_buffer_bytes <= 256 << 10);
    CHECK(r.stats.ram_ns > 0);
  }
}

TEST_CASE("runner: without prefill and aging a small workload finds free space", "[sim][runner]") {
  // Without a write buffer (static:100) every host page is programmed at least once; with one,
  // rewrites absorbed in RAM can bring write amplification below 1.
  const RunResult r = run(synthetic(kSmall), with({{"prefill", "off"}, {"age", "0"}, {"ram-policy", "static:100"}}));
  CHECK(r.prefill_requests == 0);
  CHECK(r.aging_requests == 0);
  CHECK(r.stats.gc_runs == 0);
  CHECK(r.stats.write_amplification() >= 1.0);
  CHECK(r.stats.evicted_data_pages == 0);
}

TEST_CASE("runner: a run is reproducible, and the backend changes nothing but speed", "[sim][runner]") {
  const Trace trace = synthetic(kSmall);
  const RunResult a = run(trace, with({}));
  const RunResult b = run(trace, with({}));
  const RunResult memory = run(trace, with({{"backend", "memory"}}));
  for (const RunResult* r : {&b, &memory}) {
    CHECK(r->stats.chip_page_programs == a.stats.chip_page_programs);
    CHECK(r->stats.chip_page_reads == a.stats.chip_page_reads);
    CHECK(r->stats.gc_runs == a.stats.gc_runs);
    CHECK(r->service_ns == a.service_ns);
    CHECK(r->replay_erases == a.replay_erases);
  }
  const RunResult reseeded = run(trace, with({{"seed", "2"}}));
  CHECK(reseeded.stats.chip_page_programs != a.stats.chip_page_programs);
}

TEST_CASE("runner: open loop waits for arrivals and queues behind a busy chip", "[sim][runner]") {
  const Trace trace = synthetic("uniform,read=0.5,ws=8M,count=2000,seed=4,interarrival=400us");
  const RunResult open = run(trace, with({}));
  CHECK_FALSE(open.closed_loop);
  CHECK(open.response_ns >= open.service_ns);
  CHECK(open.response_ns_max > 0);
  CHECK(open.simulated_ns >= 1999 * 400'000ULL);

  const RunResult faster = run(trace, with({{"time-scale", "0.1"}}));
  CHECK(faster.simulated_ns < open.simulated_ns);
  CHECK(faster.mean_response_us() > open.mean_response_us());
  CHECK(faster.service_ns == open.service_ns);  // the same work, only queued differently

  const RunResult closed = run(trace, with({{"closed-loop", "on"}}));
  CHECK(closed.closed_loop);
  CHECK(closed.response_ns == closed.service_ns);
  CHECK(closed.simulated_ns < open.simulated_ns);

  const RunResult twice = run(trace, with({{"repeat", "2"}}));
  CHECK(twice.requests == 4000);
  CHECK(twice.stats.read_requests + twice.stats.write_requests == 4000);
  CHECK(twice.simulated_ns >= 2 * 1999 * 400'000ULL);  // the second pass starts where the first ended
}

TEST_CASE("runner: flushes write checkpoints at the interval", "[sim][runner]") {
  const RunResult r = run(synthetic(kSmall), with({{"flush-every", "100"}, {"checkpoint-interval", "256"}}));
  CHECK(r.flushes == 30);
  CHECK(r.stats.checkpoints > 0);
  const RunResult never = run(synthetic(kSmall), with({}));
  CHECK(never.flushes == 0);
  CHECK(never.stats.checkpoints == 0);
}

TEST_CASE("runner: financial1-head replays through the FTL", "[sim][runner][traces]") {
  const auto path =
      std::filesystem::path(FLASHDIR_SOURCE_ROOT) / "bench" / "traces" / "financial1-head.ascii";
  auto trace = load_trace(path, {});
  INFO(trace.status().to_string());
  REQUIRE(trace.is_ok());
  const RunResult r = run(*trace, with({}));
  CHECK(r.requests == 10'000);
  CHECK(r.reads == 4078);
  CHECK(r.writes == 5922);
  CHECK_FALSE(r.closed_loop);
  CHECK(r.stats.gc_runs > 0);
  CHECK(r.stats.write_amplification() >= 1.0);
  CHECK(r.mean_response_us() >= r.mean_service_us());
  CHECK(r.simulated_ns >= trace->duration_ns);
}

TEST_CASE("runner: a chip too small for the footprint is refused", "[sim][runner]") {
  const Trace trace = synthetic(kSmall);
  Variant variant;
  auto plan = plan_simulation(trace, {variant});
  REQUIRE(plan.is_ok());
  Geometry small = plan->runs[0].geometry;
  small.block_count = 16;
  auto result = run_configuration(variant.config, small, plan->traces[0]);
  REQUIRE_FALSE(result.is_ok());
  CHECK_THAT(result.status().message(), Catch::Contains("too small"));
}
