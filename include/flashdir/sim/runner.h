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
// Torture mode (power-cut=every:N|random:N, memory backend): prefill and aging run without
// cuts; during the replay the chip's power is cut as planned, the FTL reopened (recovery may
// be cut too, up to twice in a row, then it runs uncut), every LPN read back and checked
// against the oracle of the durability contract (durability_oracle.h), and the replay goes
// on with the next request. Replayed reads are checked between cuts. Statistics add up what
// the FTL sessions did for the replay (recovery and the checking reads are not in them);
// recovery's chip time advances the simulated clock, the checking reads take none.
//
// Not thread-safe; independent runs may go on different threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flashdir/ftl/stats.h"
#include "flashdir/geometry.h"
#include "flashdir/sim/compaction.h"
#include "flashdir/sim/config.h"
#include "flashdir/sim/stats_delta.h"
#include "flashdir/status.h"

namespace flashdir::sim {

// Torture mode's outcome (config power-cut): the cuts survived and every breach of the
// durability contract found after them. Reproduce one with the same command: the run is
// deterministic, its cuts seeded from the configuration's seed.
struct PowerCutVerdict {
  struct Violation {
    std::uint64_t cut = 0;  // cuts before it was found: the check after cut `cut`, or a replayed read
                            // after it (0: before the first cut)
    std::string what;
  };
  static constexpr std::size_t kMaxViolationsKept = 20;

  std::uint64_t cuts = 0;              // power cuts recovered from and checked
  std::uint64_t recovery_cuts = 0;     // ... of them while recovering from the previous one
  std::uint64_t checked_lpns = 0;      // LPNs read back against the oracle after cuts
  std::uint64_t checked_read_pages = 0;  // pages of replayed reads checked between cuts
  std::uint64_t violation_count = 0;
  std::vector<Violation> violations;   // the first kMaxViolationsKept
  bool stopped = false;                // a recovery failed: the replay could not go on
};

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

  // Torture mode only.
  std::optional<PowerCutVerdict> power_cuts;

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
