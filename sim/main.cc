// flashdir-sim: replays a block I/O trace or a synthetic workload through the FTL on a
// simulated chip (no FUSE) and reports what the device did, for one configuration or several
// side by side (--compare).
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flashdir/sim/compare.h"
#include "flashdir/sim/config.h"
#include "flashdir/sim/memory_estimate.h"
#include "flashdir/sim/report.h"
#include "flashdir/sim/runner.h"
#include "flashdir/sim/simulation.h"
#include "flashdir/sim/workload.h"
#include "flashdir/size.h"

namespace {

using namespace flashdir;
using namespace flashdir::sim;

constexpr int kExitFailure = 1;  // bad input, a chip too small, an FTL error
constexpr int kExitUsage = 2;    // the command line itself
constexpr int kExitViolation = 3;  // torture mode found a breach of the durability contract

int refuse(const Status& status) {
  fmt::print(stderr, "flashdir-sim: {}\n", status.message());
  return kExitFailure;
}

struct Loaded {
  Trace trace;
  InputDescription input;
  double seconds = 0;
};

Result<Loaded> load_input(const std::string& trace_path, const std::string& synthetic,
                          const TraceOptions& options, const InputDescription& asked, std::uint64_t seed) {
  Loaded loaded;
  loaded.input = asked;
  const auto started = std::chrono::steady_clock::now();
  if (!synthetic.empty()) {
    auto spec = parse_synthetic(synthetic);
    if (!spec.is_ok()) return spec.status().with_context("--synthetic");
    // A spec that names no seed takes the run's: one seed reproduces everything.
    if (synthetic.find("seed=") == std::string::npos) spec->seed = seed;
    auto trace = generate(*spec);
    if (!trace.is_ok()) return trace.status().with_context("--synthetic");
    loaded.trace = std::move(trace).value();
    loaded.input.synthetic = true;
    loaded.input.source = to_string(*spec);
  } else {
    auto trace = load_trace(trace_path, options);
    if (!trace.is_ok()) return trace.status();
    loaded.trace = std::move(trace).value();
    loaded.input.source = trace_path;
  }
  loaded.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return loaded;
}

std::string keys_help() {
  std::string text = "Keys for --compare (the options above without dashes):";
  for (const ConfigKey& key : SimConfig::keys()) text += fmt::format(" {}", key.name);
  return text +
         "\nExample: flashdir-sim bench/traces/financial1-head.ascii --compare mapping=cftl,dftl,page\n"
         "         flashdir-sim --synthetic zipf:0.99,read=0.7,ws=64M,count=200000 --compare "
         "gc=dual-greedy,greedy";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Replays a block I/O trace (DiskSim, SPC, MSR) or a synthetic workload through the flashdir FTL "
      "on a simulated NAND chip and reports what happened: chip operations, GC, write amplification, "
      "mapping cache, wear, service and response times.",
      "flashdir-sim"};
  app.footer(keys_help());
  app.set_version_flag("-V,--version", fmt::format("flashdir-sim {}", FLASHDIR_VERSION));

  std::string trace_path;
  std::string synthetic;
  std::string format_name = "auto";
  double time_unit_ns = 1.0;
  std::optional<std::uint32_t> device;
  std::vector<std::string> compare_texts;
  bool json = false;
  std::string max_memory_text = fmt::format("{}M", default_max_memory_bytes() >> 20);

  app.add_option("TRACE", trace_path, "Trace file; its format is detected from the first request line");
  app.add_option(
         "--synthetic", synthetic,
         "Synthetic workload instead of a trace: PATTERN[,KEY=VALUE]..., PATTERN uniform, zipf[:THETA] or "
         "seq; keys read, ws, size, count, align, interarrival, seed (e.g. "
         "zipf:0.99,read=0.7,ws=64M,count=200000)")
      ->type_name("SPEC");
  auto* format_option = app.add_option("--format", format_name, "Trace format: auto, disksim, spc or msr")
                            ->capture_default_str();
  auto* unit_option =
      app.add_option("--time-unit-ns", time_unit_ns,
                     "Nanoseconds per DiskSim time unit (the shared traces use ns: 1; classic "
                     "DiskSim traces ms: 1e6)")
          ->capture_default_str();
  auto* device_option =
      app.add_option("--device", device, "Replay only this device of a multi-device trace")->type_name("N");
  app.add_option("--compare", compare_texts,
                 "Compare configurations side by side: KEY=V1,V2,... (repeatable; the product of all is run)")
      ->type_name("KEY=V1,V2,...")
      ->allow_extra_args(false);
  app.add_flag("--json", json,
               "Print one JSON document (options, trace, one object per configuration) instead of "
               "the table");

  app.add_option("--max-memory", max_memory_text,
                 "Refuse runs whose estimated memory exceeds SIZE (chip store, FTL, oracle, trace); the "
                 "default is 4 GiB or half the machine's memory if less")
      ->type_name("SIZE")
      ->capture_default_str();

  // Every configuration key is an option of the same name.
  const SimConfig defaults;
  // A switch is two flags, --KEY and --no-KEY; the last one given wins.
  struct KeyOption {
    std::string name;
    CLI::Option* option = nullptr;
    CLI::Option* negation = nullptr;
    std::string value;
  };
  std::vector<KeyOption> key_options;
  key_options.reserve(SimConfig::keys().size());
  for (const ConfigKey& key : SimConfig::keys()) {
    KeyOption& k = key_options.emplace_back();
    k.name = std::string(key.name);
    const std::string help = fmt::format("{} [default: {}]", key.help, defaults.get(k.name).value());
    if (key.is_flag) {
      k.option = app.add_flag_callback(
          "--" + k.name, [&k] { k.value = "on"; }, help);
      k.negation = app.add_flag_callback(
          "--no-" + k.name, [&k] { k.value = "off"; }, "The opposite of --" + k.name);
      k.negation->group("Device and replay");
    } else {
      k.option = app.add_option("--" + k.name, k.value, help)->type_name(std::string(key.value_hint));
    }
    k.option->group("Device and replay");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    fmt::print(stderr, "flashdir-sim: {}\n", e.what());
    return kExitUsage;
  }

  SimConfig base;
  for (const KeyOption& k : key_options) {
    if (k.option->count() == 0 && (k.negation == nullptr || k.negation->count() == 0)) continue;
    if (Status s = base.set(k.name, k.value); !s.is_ok()) return refuse(s);
  }

  auto max_memory = parse_size(max_memory_text);
  if (!max_memory.is_ok()) return refuse(max_memory.status().with_context("--max-memory"));

  if (trace_path.empty() == synthetic.empty()) {
    return refuse(Status::invalid_argument("give either a TRACE file or --synthetic SPEC (see --help)"));
  }
  TraceOptions trace_options;
  InputDescription asked;
  if (!synthetic.empty()) {
    if (format_option->count() + unit_option->count() + device_option->count() > 0) {
      return refuse(
          Status::invalid_argument("--format, --time-unit-ns and --device apply to a trace file, not to "
                                   "--synthetic"));
    }
  } else {
    auto format = parse_trace_format(format_name);
    if (!format.is_ok()) return refuse(format.status().with_context("--format"));
    trace_options.format = *format;
    trace_options.disksim_time_unit_ns = time_unit_ns;
    trace_options.only_device = device;
    asked.format = trace_format_name(*format);
    asked.time_unit_ns = time_unit_ns;
    asked.device = device;
  }

  std::vector<CompareAxis> axes;
  for (const std::string& text : compare_texts) {
    auto axis = parse_compare_axis(text);
    if (!axis.is_ok()) return refuse(axis.status());
    axes.push_back(std::move(axis).value());
  }
  auto variants = expand_compare(base, axes);
  if (!variants.is_ok()) return refuse(variants.status());

  auto loaded = load_input(trace_path, synthetic, trace_options, asked, base.seed);
  if (!loaded.is_ok()) return refuse(loaded.status());
  auto plan = plan_simulation(loaded->trace, std::move(variants).value());
  if (!plan.is_ok()) return refuse(plan.status());
  if (Status s = check_memory(*plan, *max_memory); !s.is_ok()) return refuse(s);
  SimulationReport report =
      start_report(loaded->input, base, axes, summarize_trace(loaded->trace, loaded->seconds), *plan);
  loaded->trace = Trace{};  // the compacted traces are all the runs need

  if (!json) {
    fmt::print("{}\n", format_header(report));
    std::fflush(stdout);
  }
  const bool progress = ::isatty(STDERR_FILENO) != 0 && plan->runs.size() > 1;
  for (std::size_t i = 0; i < plan->runs.size(); ++i) {
    const PlannedRun& run = plan->runs[i];
    if (progress) fmt::print(stderr, "[{}/{}] {}\n", i + 1, plan->runs.size(), run.variant.label());
    auto result = run_configuration(run.variant.config, run.geometry, plan->traces[run.trace_index]);
    if (!result.is_ok()) {
      return refuse(run.variant.settings.empty() ? result.status()
                                                 : result.status().with_context(run.variant.label()));
    }
    report.configurations[i].result = std::move(result).value();
  }
  fmt::print("{}", json ? format_json(report) : format_table(report));
  for (const ConfigurationReport& c : report.configurations) {
    if (c.result->power_cuts && (c.result->power_cuts->violation_count != 0 || c.result->power_cuts->stopped)) {
      return kExitViolation;
    }
  }
  return 0;
}
