#include "flashdir/sim/memory_estimate.h"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>

#include "flashdir/size.h"

namespace flashdir::sim {

MemoryEstimate estimate_run_memory(const SimConfig& config, const Geometry& geometry, std::uint64_t logical_pages) {
  MemoryEstimate estimate;
  const std::uint64_t pages = geometry.page_count();
  const std::uint64_t oob_bytes = pages * geometry.oob_size_bytes;
  if (config.backend == Backend::memory) {
    estimate.chip_bytes = oob_bytes + pages * geometry.page_size_bytes;
    estimate.ftl_bytes = pages * kMemoryBytesPerPage;
  } else {
    estimate.chip_bytes = oob_bytes;
    estimate.ftl_bytes = pages * kMetadataBytesPerPage;
  }
  estimate.chip_bytes += geometry.block_count * kBytesPerBlock;
  // The device RAM's structures hold at most the budget's worth of entries and pages; their
  // overhead is of the same order, hence twice the budget.
  estimate.ftl_bytes += 2 * config.ram.budget_bytes;
  // The oracle: per LPN its newest durable version and newest acknowledged one.
  if (config.power_cut.enabled()) estimate.oracle_bytes = logical_pages * 2 * sizeof(std::uint64_t);
  estimate.fixed_bytes = kProcessBytes;
  return estimate;
}

std::uint64_t compact_trace_bytes(const CompactTrace& trace) {
  return trace.requests.capacity() * sizeof(ReplayRequest);
}

std::uint64_t default_max_memory_bytes() {
  constexpr std::uint64_t kDefault = std::uint64_t{4} << 30;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_bytes <= 0) return kDefault;
  return std::min(kDefault, static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes) / 2);
}

namespace {

std::uint64_t traces_bytes(const SimulationPlan& plan) {
  std::uint64_t bytes = 0;
  for (const CompactTrace& trace : plan.traces) bytes += compact_trace_bytes(trace);
  return bytes;
}

// The run needing the most memory, and its estimate.
std::pair<const PlannedRun*, MemoryEstimate> largest_run(const SimulationPlan& plan) {
  const PlannedRun* largest = nullptr;
  MemoryEstimate most;
  for (const PlannedRun& run : plan.runs) {
    const MemoryEstimate estimate = estimate_run_memory(run.variant.config, run.geometry, run.logical_pages);
    if (largest == nullptr || estimate.total() > most.total()) {
      largest = &run;
      most = estimate;
    }
  }
  return {largest, most};
}

}  // namespace

std::uint64_t plan_memory_bytes(const SimulationPlan& plan) {
  return traces_bytes(plan) + largest_run(plan).second.total();
}

Status check_memory(const SimulationPlan& plan, std::uint64_t max_bytes) {
  const auto [run, estimate] = largest_run(plan);
  if (run == nullptr) return Status::ok();
  const std::uint64_t traces = traces_bytes(plan);
  const std::uint64_t total = traces + estimate.total();
  if (total <= max_bytes) return Status::ok();
  std::string parts = fmt::format("chip store {}, FTL {}", format_size(estimate.chip_bytes), format_size(estimate.ftl_bytes));
  if (estimate.oracle_bytes != 0) parts += fmt::format(", power-cut oracle {}", format_size(estimate.oracle_bytes));
  parts += fmt::format(", trace {}", format_size(traces));
  const std::string who = run->variant.settings.empty() ? std::string() : run->variant.label() + ": ";
  return Status::invalid_argument(fmt::format(
      "{}the run needs an estimated {} of memory ({}) for a chip of {}, above --max-memory {}; "
      "raise --max-memory, or shrink the chip: --size, or for an automatic size a higher --utilization "
      "or a smaller --chunk-pages",
      who, format_size(total), parts, run->geometry.describe(), format_size(max_bytes)));
}

}  // namespace flashdir::sim
