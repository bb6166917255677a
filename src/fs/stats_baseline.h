// Zeroing a mount's counters as every reader of its stats sees them (`.flashdir/reset`,
// `flashdir stats --reset`). The counters keep running where they are kept (the request
// counters, the cache engine, the FTL); the report shows them less a baseline taken at the
// reset, and recomputes the ratios made of them (hit ratio, write amplification, ...) over
// what happened since. Gauges are not reset: cache fill, dirty pages, device RAM, wear, the
// restart report. No libfuse here.
//
// Thread safety: reset() and apply() may be called from any thread at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fs/stats_report.h"

namespace flashdir::fs {

class StatsBaseline {
 public:
  // Takes the cumulative counters of `raw` (the stats as collected, no baseline applied) as
  // the new zero.
  void reset(const std::vector<StatsSection>& raw);
  // Subtracts the baseline from the cumulative counters of `sections` and recomputes the ratios;
  // adds to the section "mount" since when the counters run: `counters_seconds`, and
  // `counters_reset_at` (local time, "" when never reset: they run since the mount).
  void apply(std::vector<StatsSection>& sections) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> baseline_;  // "section.row" -> value at the reset
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::string reset_at_;  // "" until the first reset
};

}  // namespace flashdir::fs
