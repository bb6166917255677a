#include "flashdir/sim/simulation.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <tuple>

#include "flashdir/ftl/ftl.h"
#include "flashdir/sim/chip_sizing.h"
#include "flashdir/size.h"

namespace flashdir::sim {
namespace {

Status in_context(const Variant& variant, const Status& status) {
  return variant.settings.empty() ? status : status.with_context(variant.label());
}

// The block count of `run` for a capacity, and its logical space; the span must fit.
Status fit(PlannedRun& run, std::uint64_t block_count, const CompactTrace& trace) {
  run.geometry = run.variant.config.geometry(block_count);
  FLASHDIR_TRY(run.geometry.validate());
  auto logical = Ftl::logical_pages_for(run.geometry, run.variant.config.overprovision_permille);
  if (!logical.is_ok()) return logical.status().with_context(run.geometry.describe());
  run.logical_pages = *logical;
  return check_span_fits(run.geometry, run.logical_pages, trace);
}

}  // namespace

Result<SimulationPlan> plan_simulation(const Trace& trace, std::vector<Variant> variants) {
  SimulationPlan plan;
  // One compaction per shape.
  std::map<std::tuple<std::uint32_t, std::uint32_t, ChunkOrder>, std::size_t> trace_of_shape;
  for (Variant& variant : variants) {
    const SimConfig& c = variant.config;
    if (Status s = c.validate(); !s.is_ok()) return in_context(variant, s);
    const std::uint32_t chunk_pages = c.chunk_pages(c.geometry(0));
    const auto shape = std::make_tuple(c.page_size_bytes, chunk_pages, c.chunk_order);
    auto [it, inserted] = trace_of_shape.try_emplace(shape, plan.traces.size());
    if (inserted) {
      auto compact = compact_trace(trace, c.page_size_bytes, chunk_pages, c.chunk_order);
      if (!compact.is_ok()) return in_context(variant, compact.status());
      plan.traces.push_back(std::move(compact).value());
    }
    PlannedRun run;
    run.variant = std::move(variant);
    run.trace_index = it->second;
    plan.runs.push_back(std::move(run));
  }

  for (PlannedRun& run : plan.runs) {
    const SimConfig& c = run.variant.config;
    const CompactTrace& compact = plan.traces[run.trace_index];
    const std::uint64_t block_bytes = c.geometry(0).block_size_bytes();
    std::uint64_t blocks = 0;
    if (c.chip_size_bytes != 0) {
      if (c.chip_size_bytes % block_bytes != 0) {
        return in_context(run.variant, Status::invalid_argument(fmt::format(
                                           "size={}: not a whole number of {} blocks ({} pages of {} B)",
                                           format_size(c.chip_size_bytes), format_size(block_bytes),
                                           c.pages_per_block, c.page_size_bytes)));
      }
      blocks = c.chip_size_bytes / block_bytes;
    } else {
      // Each configuration its own chip: the smallest at which its options give the span its
      // utilization (a shared chip would leave the others emptier than asked).
      auto sized = blocks_for_logical_pages(c.geometry(0), c.overprovision_permille,
                                            logical_pages_needed(compact.footprint_pages(), c.utilization));
      if (!sized.is_ok()) return in_context(run.variant, sized.status());
      blocks = *sized;
    }
    if (Status s = fit(run, blocks, compact); !s.is_ok()) return in_context(run.variant, s);
  }
  return plan;
}

}  // namespace flashdir::sim
