// What slowstore adds to each call it passes on: one round trip, as a network store's client
// waits for its server's answer, and for read and write payload a line of limited bandwidth
// that all calls share, as they would share a link.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>

namespace slowstore {

class Latency {
 public:
  // bits_per_second 0: no bandwidth limit.
  Latency(std::chrono::microseconds round_trip, double bits_per_second);

  // Sleeps for one round trip. Calls on other threads wait alongside, not behind: requests in
  // flight overlap, as on a link with several outstanding calls.
  void round_trip() const;

  // Waits until the shared line has carried `bytes`, after whatever it carries already.
  void transfer(std::size_t bytes);

  std::chrono::microseconds round_trip_time() const { return round_trip_; }

 private:
  std::chrono::microseconds round_trip_;
  double bytes_per_second_;
  std::mutex line_mutex_;
  std::chrono::steady_clock::time_point line_free_at_{};
};

}  // namespace slowstore
