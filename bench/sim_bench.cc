// flashdir-sim's own speed, whole run as the tool does it: load the trace, plan (compact and
// size the chip), format, prefill, age and replay. One benchmark per configuration the issue
// tracks against MQSim: DFTL + greedy GC on an empty device, and the defaults (CFTL, Dual
// Greedy, prefill and aging); the replay alone beside them. Rates are trace requests per second
// of wall time; `vs_parse` divides by the rate of parsing the same trace alone, measured in the
// same process, so that the ratio survives a slower or busier machine and a regression shows
// as a smaller ratio.
//
//   build/bench/sim-bench                      # or: meson test -C build --benchmark sim -v
//   FLASHDIR_SIM_BENCH_TRACE=path build/bench/sim-bench
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "flashdir/sim/runner.h"
#include "flashdir/sim/simulation.h"
#include "flashdir/sim/workload.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

using Settings = std::vector<std::pair<const char*, const char*>>;

std::string trace_path() {
  if (const char* path = std::getenv("FLASHDIR_SIM_BENCH_TRACE"); path != nullptr) return path;
  return FLASHDIR_SOURCE_ROOT "/bench/traces/financial1-head.ascii";
}

Trace load() {
  auto trace = load_trace(trace_path(), {});
  if (!trace.is_ok()) std::abort();
  return std::move(trace).value();
}

// Trace requests parsed per second, the baseline (best of a few rounds: the least disturbed).
double parse_rate() {
  static const double rate = [] {
    double best = 0;
    for (int round = 0; round < 5; ++round) {
      const auto start = std::chrono::steady_clock::now();
      const Trace trace = load();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, static_cast<double>(trace.request_count()) / seconds);
    }
    return best;
  }();
  return rate;
}

SimConfig configured(const Settings& settings) {
  SimConfig config;
  for (const auto& [key, value] : settings) {
    if (!config.set(key, value).is_ok()) std::abort();
  }
  return config;
}

// Trace requests per second over `seconds` of the iterations, and its ratio to parsing alone.
void report(benchmark::State& state, std::uint64_t requests_per_iteration, double seconds) {
  const double rate = static_cast<double>(requests_per_iteration * state.iterations()) / seconds;
  state.counters["requests_per_s"] = rate;
  state.counters["parse_requests_per_s"] = parse_rate();
  state.counters["vs_parse"] = rate / parse_rate();
}

// The whole run, as `flashdir-sim TRACE` with these options does it.
void BM_WholeRun(benchmark::State& state, const Settings& settings) {
  const SimConfig config = configured(settings);
  std::uint64_t requests = 0;
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const Trace trace = load();
    auto plan = plan_simulation(trace, {Variant{{}, config}});
    const PlannedRun& run = plan->runs[0];
    auto result = run_configuration(run.variant.config, run.geometry, plan->traces[run.trace_index]);
    if (!result.is_ok()) std::abort();
    requests = trace.request_count();
    benchmark::DoNotOptimize(result->stats.chip_page_programs);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  report(state, requests, seconds);
}

// The replay alone (its wall time as the runner measures it), same configurations.
void BM_Replay(benchmark::State& state, const Settings& settings) {
  const SimConfig config = configured(settings);
  const Trace trace = load();
  auto plan = plan_simulation(trace, {Variant{{}, config}});
  const PlannedRun& run = plan->runs[0];
  double seconds = 0;
  for (auto _ : state) {
    auto result = run_configuration(run.variant.config, run.geometry, plan->traces[run.trace_index]);
    if (!result.is_ok()) std::abort();
    state.SetIterationTime(result->replay_wall_seconds);
    seconds += result->replay_wall_seconds;
  }
  report(state, trace.request_count(), seconds);
}

const Settings kEmptyDftlGreedy = {{"mapping", "dftl"}, {"gc", "greedy"}, {"prefill", "off"}, {"age", "0"}};
const Settings kDefaults = {};

}  // namespace

BENCHMARK_CAPTURE(BM_WholeRun, dftl_greedy_empty, kEmptyDftlGreedy)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeRun, defaults, kDefaults)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Replay, dftl_greedy_empty, kEmptyDftlGreedy)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Replay, defaults, kDefaults)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
