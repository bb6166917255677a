#include "arrival_clock.h"

#include <cmath>
#include <fmt/format.h>

namespace flashdir::sim::detail {

Result<std::uint64_t> ArrivalClock::arrival_ns(const TraceTime& time) {
  if (!started_) {
    started_ = true;
    first_ = time;
    return std::uint64_t{0};
  }
  // Whole parts are subtracted as integers: exact even for 1e17-tick file times.
  const double whole_units = time.whole >= first_.whole
                                 ? static_cast<double>(time.whole - first_.whole)
                                 : -static_cast<double>(first_.whole - time.whole);
  double ns = (whole_units + (time.fraction - first_.fraction)) * ns_per_unit_;
  if (ns < last_ns_) {
    ++clamped_count_;
    ns = last_ns_;
  }
  if (!(ns < 0x1p63)) {
    return Status::invalid_argument(fmt::format(
        "time stamp lies {:.3g} s after the first request's, beyond 2^63 ns (wrong time unit?)",
        ns * 1e-9));
  }
  last_ns_ = ns;
  return static_cast<std::uint64_t>(std::floor(ns + 0.5));
}

}  // namespace flashdir::sim::detail
