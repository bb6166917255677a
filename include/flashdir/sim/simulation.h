// Planning a flashdir-sim run: the trace compacted for each chip shape, and a chip for each
// configuration.
//
// Chip size. Configurations compared side by side run on the same chip capacity:
//  - `size` given: that capacity (a whole number of the configuration's blocks), and the
//    trace's compacted footprint must fit the logical space, else an error.
//  - `size=auto` (default): configurations with the same utilization share one capacity, the
//    smallest that gives every one of them (its own geometry and over-provisioning) a logical
//    space of at least footprint / utilization pages, and at least kMinAutoBlocks blocks.
//    Without --compare that is the base configuration's own chip. Utilization itself is what
//    sizes the chip, so configurations differing in it get chips of their own.
// Each configuration then uses the whole logical space of its chip (prefill writes all of it);
// its effective utilization is footprint / logical pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flashdir/geometry.h"
#include "flashdir/sim/compaction.h"
#include "flashdir/sim/compare.h"
#include "flashdir/sim/workload.h"
#include "flashdir/status.h"

namespace flashdir::sim {

struct PlannedRun {
  Variant variant;
  Geometry geometry;
  std::uint64_t logical_pages = 0;
  std::size_t trace_index = 0;  // into SimulationPlan::traces

  double utilization(const CompactTrace& trace) const {
    return logical_pages == 0
               ? 0.0
               : static_cast<double>(trace.footprint_pages()) / static_cast<double>(logical_pages);
  }
};

struct SimulationPlan {
  std::vector<CompactTrace> traces;  // one per (page size, pages per block, chunk order) in use
  std::vector<PlannedRun> runs;      // in the order of the variants
};

// Validates each variant, compacts the trace once per shape, and chooses the chips (above).
// Errors name the configuration: "mapping=dftl op=30: the chip ... is too small ...".
Result<SimulationPlan> plan_simulation(const Trace& trace, std::vector<Variant> variants);

}  // namespace flashdir::sim
