// The parts of a report known before anything runs.
#include "flashdir/sim/report.h"

namespace flashdir::sim {

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
  return report;
}

}  // namespace flashdir::sim
