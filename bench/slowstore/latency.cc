#include "latency.h"

#include <algorithm>
#include <thread>

namespace slowstore {

Latency::Latency(std::chrono::microseconds round_trip, double bits_per_second)
    : round_trip_(round_trip), bytes_per_second_(bits_per_second / 8) {}

void Latency::round_trip() const {
  if (round_trip_.count() > 0) std::this_thread::sleep_for(round_trip_);
}

void Latency::transfer(std::size_t bytes) {
  if (bytes_per_second_ <= 0 || bytes == 0) return;
  const auto on_the_line = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(static_cast<double>(bytes) / bytes_per_second_));
  std::chrono::steady_clock::time_point carried_at;
  {
    // The line carries one payload after another: each call books the time after the last
    // booking (or now, if the line is idle) and sleeps, unlocked, until its bytes are through.
    const std::lock_guard lock(line_mutex_);
    line_free_at_ = std::max(line_free_at_, std::chrono::steady_clock::now()) + on_the_line;
    carried_at = line_free_at_;
  }
  std::this_thread::sleep_until(carried_at);
}

}  // namespace slowstore
