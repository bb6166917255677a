// One configuration's run: a fresh chip and FTL, the prefill and aging that put the device in
// a used state, then the measured replay of a compacted trace.
//
// Timing. The chip has a simulated clock; the FTL's calls advance it by the chip's latencies.
// Open loop (the default, for traces with arrival times): before a request the clock moves up
// to its arrival (arrival x time_scale, after the start of the pass); a request arriving while
// the chip is busy waits, as in a single-server queue. Service time is the clock time the
// request's FTL calls took; response time is completion - arrival. Closed loop (asked for, or
// a trace whose requests all arrive at 0) issues each request when the previous one completes,
// so response = service. Pass k + 1 starts where pass k ended.
//
// Not thread-safe; independent runs may go on different threads.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "flashdir/ftl/stats.h"
#include "flashdir/geometry.h"
#include "flashdir/sim/compaction.h"
#include "flashdir/sim/config.h"
#include "flashdir/sim/stats_delta.h"
#include "flashdir/status.h"

namespace flashdir::sim {

struct RunResult {
  Geometry geometry;
  std::uint64_t logical_pages = 0;

  // The measured replay (every pass): FTL statistics as stats_delta, and per-block erases.
  FtlStats stats;
  EraseSpread replay_erases;
  EraseSpread end_erases;  // over the chip's whole life, at the end of the run

  std::uint64_t requests = 0;  // trace requests replayed (trace requests x repeat)
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t flushes = 0;
  bool closed_loop = false;      // as replayed
  std::uint64_t service_ns = 0;  // sums over the requests
  std::uint64_t response_ns = 0;
  std::uint64_t response_ns_max = 0;
  std::uint64_t simulated_ns = 0;  // simulated time the measured replay spanned
  // The share (0..1) of the device RAM that the policy gives mapping (its partition; for tree,
  // what it holds) along the replay, about 256 samples: (requests replayed so far, share).
  std::vector<std::pair<std::uint64_t, double>> mapping_partition;

  // Before the replay.
  std::uint64_t prefill_requests = 0;
  std::uint64_t aging_requests = 0;
  std::uint64_t aging_pages = 0;

  // The simulator's own speed (wall time).
  double replay_wall_seconds = 0;
  double total_wall_seconds = 0;     // format, prefill, aging and replay
  std::uint64_t total_requests = 0;  // FTL requests of the whole run (pieces of cut requests count)

  double mean_service_us() const;
  double mean_response_us() const;
  double replay_requests_per_second() const;
  double total_requests_per_second() const;
};

// Runs `config` on a chip of `geometry` (its own validation aside, the caller has planned it:
// the trace's footprint must fit the FTL's logical space, else invalid_argument).
Result<RunResult> run_configuration(const SimConfig& config, const Geometry& geometry,
                                    const CompactTrace& trace);

}  // namespace flashdir::sim
