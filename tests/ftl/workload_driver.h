// Seeded random host workloads for FTL tests, checked against an oracle of versions per LPN.
#pragma once

#include <cstdint>
#include <optional>
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

// What an LPN may read back as after a power cut, per the FTL's contract.
struct LpnOracle {
  std::uint64_t version = 0;        // last acknowledged write (0: never written)
  bool trimmed = false;             // trimmed since that write
  bool trim_durable = false;        // ... and a flush completed since the trim
  std::optional<std::uint64_t> in_flight;  // a write of this version was under way at the cut
};

class Oracle {
 public:
  explicit Oracle(std::uint64_t logical_pages) : lpns_(logical_pages) {}
  void wrote(std::uint64_t first, std::uint32_t count, std::uint64_t version);
  void trimmed(std::uint64_t first, std::uint32_t count);
  void flushed();
  void in_flight_write(std::uint64_t first, std::uint32_t count, std::uint64_t version);
  void in_flight_trim(std::uint64_t first, std::uint32_t count);
  // After a successful reopen: the state is whatever was read back (caller passes it).
  void settle(std::uint64_t lpn, std::uint64_t version_read);
  bool allows(std::uint64_t lpn, std::uint64_t version_read) const;
  // Without power cuts: the one value each LPN must read as.
  std::uint64_t expected(std::uint64_t lpn) const;
  std::uint64_t size() const { return lpns_.size(); }

 private:
  std::vector<LpnOracle> lpns_;
};

}  // namespace flashdir::testing
