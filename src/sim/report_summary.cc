// The parts of a report known before anything runs.
#include <fmt/format.h>

#include "flashdir/sim/report.h"
#include "flashdir/sim/memory_estimate.h"

namespace flashdir::sim {
namespace {

// `word` as one shell word: as it is when only safe characters, else in single quotes.
std::string shell_word(std::string_view word) {
  const bool safe = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789_-+=.,:/@%") == std::string_view::npos;
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::string reproduce_command(const InputDescription& input, const SimConfig& config) {
  std::string command = "flashdir-sim";
  if (input.synthetic) {
    command += " --synthetic " + shell_word(input.source);
  } else {
    command += " " + shell_word(input.source);
    if (input.format != "auto") command += " --format " + input.format;
    if (input.time_unit_ns != 1.0) command += fmt::format(" --time-unit-ns {}", input.time_unit_ns);
    if (input.device) command += fmt::format(" --device {}", *input.device);
  }
  const SimConfig defaults;
  for (const ConfigKey& key : SimConfig::keys()) {
    const std::string value = config.get(key.name).value();
    if (value == defaults.get(key.name).value()) continue;
    if (key.is_flag) {  // a switch is two flags on the command line
      command += fmt::format(" --{}{}", value == "on" ? "" : "no-", key.name);
    } else {
      command += fmt::format(" --{} {}", key.name, shell_word(value));
    }
  }
  return command;
}

TraceSummary summarize_trace(const Trace& trace, double load_seconds) {
  TraceSummary s;
  s.source = trace.source;
  s.format = trace.format;
  s.requests = trace.request_count();
  s.reads = trace.reads;
  s.writes = trace.writes;
  s.read_bytes = trace.read_bytes;
  s.write_bytes = trace.write_bytes;
  s.devices = trace.devices.size();
  s.duration_ns = trace.duration_ns;
  s.clamped_arrivals = trace.clamped_arrivals;
  s.load_seconds = load_seconds;
  return s;
}

FootprintSummary summarize_footprint(const CompactTrace& trace) {
  FootprintSummary s;
  s.page_size_bytes = trace.page_size_bytes;
  s.pages_per_chunk = trace.pages_per_chunk;
  s.order = trace.order;
  s.chunk_count = trace.chunk_count;
  s.footprint_pages = trace.footprint_pages();
  s.touched_pages = trace.touched_pages;
  s.cut_requests = trace.cut_requests;
  s.replay_requests = trace.requests.size();
  s.max_request_pages = trace.max_request_pages;
  return s;
}

SimulationReport start_report(const InputDescription& input, const SimConfig& base,
                              std::vector<CompareAxis> axes, const TraceSummary& trace,
                              const SimulationPlan& plan) {
  SimulationReport report;
  report.input = input;
  report.base = base;
  report.axes = std::move(axes);
  report.trace = trace;
  for (const CompactTrace& compact : plan.traces) report.footprints.push_back(summarize_footprint(compact));
  for (const PlannedRun& run : plan.runs) {
    ConfigurationReport c;
    c.variant = run.variant;
    c.footprint_index = run.trace_index;
    c.geometry = run.geometry;
    c.logical_pages = run.logical_pages;
    c.utilization = run.utilization(plan.traces[run.trace_index]);
    report.configurations.push_back(std::move(c));
  }
  report.memory_estimate_bytes = plan_memory_bytes(plan);
  return report;
}

}  // namespace flashdir::sim
