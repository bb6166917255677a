// Simulated time. The chip is handed a clock and advances it by the latency of each
// operation; nothing in the device model reads the wall clock, so a run replays exactly.
#pragma once

#include <cstdint>

namespace flashdir {

// Monotonic simulated nanoseconds. Not thread-safe: the device that owns it serialises access.
class SimClock {
 public:
  std::uint64_t now_ns() const { return now_ns_; }
  void advance_ns(std::uint64_t ns) { now_ns_ += ns; }
  // Moves time forward to `ns` if it lies ahead (an arrival time from a trace); never back.
  void advance_to_ns(std::uint64_t ns) {
    if (ns > now_ns_) now_ns_ = ns;
  }

 private:
  std::uint64_t now_ns_ = 0;
};

}  // namespace flashdir
