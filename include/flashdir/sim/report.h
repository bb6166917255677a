// What flashdir-sim prints: the effective options and the seed, the trace and its compacted
// footprint, the chips chosen, then one column (or JSON object) per configuration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flashdir/geometry.h"
#include "flashdir/sim/compare.h"
#include "flashdir/sim/config.h"
#include "flashdir/sim/runner.h"
#include "flashdir/sim/simulation.h"
#include "flashdir/sim/workload.h"

namespace flashdir::sim {

// Where the requests came from, as the user asked for them.
struct InputDescription {
  bool synthetic = false;
  std::string source;                   // the trace path, or the synthetic spec spelled out (to_string)
  std::string format = "auto";          // trace format asked for
  double time_unit_ns = 1.0;            // DiskSim time unit
  std::optional<std::uint32_t> device;  // only this device replayed
};

struct TraceSummary {
  std::string source;
  std::string format;  // as detected: "disksim", "spc", "msr", "synthetic"
  std::uint64_t requests = 0;
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t devices = 0;
  std::uint64_t duration_ns = 0;
  std::uint64_t clamped_arrivals = 0;
  double load_seconds = 0;  // wall time to read or generate it
};
TraceSummary summarize_trace(const Trace& trace, double load_seconds);

// A compacted trace without its requests.
struct FootprintSummary {
  std::uint32_t page_size_bytes = 0;
  std::uint32_t pages_per_chunk = 0;
  ChunkOrder order = ChunkOrder::address;
  std::uint64_t chunk_count = 0;
  std::uint64_t footprint_pages = 0;
  std::uint64_t touched_pages = 0;
  std::uint64_t cut_requests = 0;
  std::uint64_t replay_requests = 0;  // FTL calls per pass (cut requests count their pieces)
  std::uint32_t max_request_pages = 0;
};
FootprintSummary summarize_footprint(const CompactTrace& trace);

struct ConfigurationReport {
  Variant variant;
  std::size_t footprint_index = 0;  // into SimulationReport::footprints
  Geometry geometry;
  std::uint64_t logical_pages = 0;
  double utilization = 0;           // compacted span / logical pages
  std::optional<RunResult> result;  // once run
};

struct SimulationReport {
  InputDescription input;
  SimConfig base;
  std::vector<CompareAxis> axes;
  TraceSummary trace;
  std::vector<FootprintSummary> footprints;
  std::vector<ConfigurationReport> configurations;
  std::uint64_t memory_estimate_bytes = 0;  // the plan's: compacted traces plus its largest run
};

// Everything but the results, from the plan.
SimulationReport start_report(const InputDescription& input, const SimConfig& base,
                              std::vector<CompareAxis> axes, const TraceSummary& trace,
                              const SimulationPlan& plan);

// The flashdir-sim command that runs `config` alone on `input`: every option that differs
// from its default, shell-quoted. What a torture-mode violation prints to reproduce it.
std::string reproduce_command(const InputDescription& input, const SimConfig& config);

// Options, seed, trace, footprint and chips: printed before the runs.
std::string format_header(const SimulationReport& report);
// One column per configuration that has a result; more columns than fit in a line are
// wrapped into several tables, each with the row names. Torture mode adds one verdict line
// per configuration, and a line per violation with the seed and the command reproducing it.
std::string format_table(const SimulationReport& report);
// The same as one JSON document: {"seed", "input", "options", "compare", "trace",
// "footprints", "configurations": [one object per configuration]}.
std::string format_json(const SimulationReport& report);

}  // namespace flashdir::sim
