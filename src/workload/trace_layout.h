// The steps that turn parsed requests into a finished Trace, shared by the trace readers and
// the synthetic generator.
#pragma once

#include "flashdir/sim/workload.h"
#include "flashdir/status.h"

namespace flashdir::sim::detail {

// Fills trace.devices from trace.requests and, if `fold`, moves each device into its own
// range (TraceOptions::fold_devices). Fails only if the folded space would pass 2^64 bytes.
Status lay_out_devices(Trace& trace, bool fold);

// Fills the summary fields of `trace` (reads ... duration_ns) from its requests. Leaves
// clamped_arrivals alone: only the reader knows it.
void summarise(Trace& trace);

}  // namespace flashdir::sim::detail
