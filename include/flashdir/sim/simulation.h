// Planning a flashdir-sim run: the trace compacted for each chip shape, and a chip for each
// configuration.
//
// Chip size, per configuration:
//  - `size` given: that capacity (a whole number of the configuration's blocks), and the
//    trace's compacted span must fit the logical space, else an error.
//  - `size=auto` (default): the smallest chip that gives the configuration (its own geometry
//    and over-provisioning) a logical space of at least span / utilization pages, and at least
//    kMinAutoBlocks blocks. Configurations compared side by side thus each sit at the asked
//    utilization (op=7 and op=25 get different chips), rather than sharing the chip of the most
//    demanding one.
// Each configuration then uses the whole logical space of its chip (prefill writes all of it);
// its effective utilization is span / logical pages. The span is counted in chunks of
// `chunk-pages` pages (a block unless set; chip_sizing.h).
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
