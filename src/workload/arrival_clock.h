// Turns the time stamps of a trace into arrival times: nanoseconds since the first request,
// never decreasing. Real traces are merged from per-device logs and occasionally step back by
// a little; a replayer needs a monotone clock, and keeping the file order (rather than
// sorting) keeps the order in which the traced system issued the requests.
#pragma once

#include <cstdint>

#include "flashdir/status.h"
#include "trace_record.h"

namespace flashdir::sim::detail {

class ArrivalClock {
 public:
  // `ns_per_unit`: finite and positive, the length of one unit of the trace's time stamps.
  explicit ArrivalClock(double ns_per_unit) : ns_per_unit_(ns_per_unit) {}

  // The arrival time of a request stamped `time`: 0 for the first call, then the distance to
  // the first time stamp, rounded to whole ns and clamped to at least the previous arrival.
  // Fails if that distance exceeds 2^63 ns (292 years: a misread time unit).
  Result<std::uint64_t> arrival_ns(const TraceTime& time);
  // How many arrivals were clamped.
  std::uint64_t clamped_count() const { return clamped_count_; }

 private:
  double ns_per_unit_;
  bool started_ = false;
  TraceTime first_;
  double last_ns_ = 0;  // unrounded, so that clamping compares exact distances
  std::uint64_t clamped_count_ = 0;
};

}  // namespace flashdir::sim::detail
