// Seeded random host workloads for FTL tests, checked against an oracle of versions per LPN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string>
#include <vector>

#include "flashdir/ftl/ftl.h"
#include "flashdir/random.h"

namespace flashdir::testing {

enum class Pattern { uniform, zipf, sequential };
const char* pattern_name(Pattern pattern);

// Picks LPNs for a workload: uniform, Zipf (theta 0.99 over the space, hot LPNs scattered),
// or sequential with wrap-around.
class LpnPicker {
 public:
  LpnPicker(Pattern pattern, std::uint64_t logical_pages, SeededRandom& random);
  std::uint64_t next(std::uint32_t run_length);

 private:
  Pattern pattern_;
  std::uint64_t pages_;
  SeededRandom& random_;
  std::vector<double> cdf_;            // Zipf: cumulative probability of rank
  std::vector<std::uint64_t> permute_; // Zipf: rank -> LPN
  std::uint64_t cursor_ = 0;
};

// What each LPN may read back as, per the FTL's contract: after a power cut, the newest write
// at or below the durable watermark at the cut (or a trim made durable by a flush), or any
// write or trim acknowledged after it, or the request in flight. Versions are read back from
// page contents (ftl_harness.h: version_of; 0 = unmapped).
class Oracle {
 public:
  explicit Oracle(std::uint64_t logical_pages) : lpns_(logical_pages) {}
  void wrote(std::uint64_t first, std::uint32_t count, std::uint64_t version);
  void trimmed(std::uint64_t first, std::uint32_t count);
  // A flush completed: every earlier trim is durable (writes are, by the watermark).
  void flushed();
  void in_flight_write(std::uint64_t first, std::uint32_t count, std::uint64_t version);
  void in_flight_trim(std::uint64_t first, std::uint32_t count);
  // Whether `version_read` is allowed after a power cut when the durable watermark was `durable`.
  bool allows(std::uint64_t lpn, std::uint64_t version_read, std::uint64_t durable) const;
  // After a successful reopen: what was read back is the state from now on.
  void settle(std::uint64_t lpn, std::uint64_t version_read);
  // Without power cuts: the one value each LPN must read as.
  std::uint64_t expected(std::uint64_t lpn) const;
  std::uint64_t size() const { return lpns_.size(); }
  // "settled 12; write 30, trim (durable), write 41; in flight 45": for failure messages.
  std::string describe(std::uint64_t lpn) const;

 private:
  struct Event {
    bool trim = false;
    std::uint64_t version = 0;  // of a write
    bool durable = false;       // of a trim: a flush completed after it
  };
  struct LpnState {
    std::uint64_t settled = 0;  // the value at the last settle
    std::vector<Event> events;  // since then, oldest first
    std::optional<std::uint64_t> in_flight;
    bool trim_in_flight = false;
  };
  std::vector<LpnState> lpns_;
};

}  // namespace flashdir::testing
