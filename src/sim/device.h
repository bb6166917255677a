// The device one flashdir-sim run drives: a chip over a page store, its clock, and the FTL;
// in torture mode also the fault injector, the switch that routes the FTL through it, and
// the durability oracle (runner.h says what the mode does). The runner sees host requests
// that either succeed or fail for good: a power cut is recovered from and checked in here.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "durability_oracle.h"
#include "flashdir/clock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/faulty_chip.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "flashdir/random.h"
#include "flashdir/sim/config.h"
#include "flashdir/sim/runner.h"
#include "power_switch.h"

namespace flashdir::sim::detail {

class Device {
 public:
  Device(const SimConfig& config, const Geometry& geometry);

  // Formats the FTL; host requests are at most `max_request_pages` long.
  Status open(std::uint32_t max_request_pages);

  Ftl& ftl() { return *ftl_; }
  NandChip& chip() { return switch_; }
  SimClock& clock() { return clock_; }

  Status write(std::uint64_t lpn, std::uint32_t count);
  Status read(std::uint64_t lpn, std::uint32_t count);
  Status flush();

  // From now on the FTL's statistics are measured (over every session) and, in torture mode,
  // the power may be cut.
  void start_replay();
  FtlStats measured_stats() const;
  // Torture mode: the verdict so far; nullptr otherwise.
  const PowerCutVerdict* verdict() const { return verdict_ ? &*verdict_ : nullptr; }
  // Torture mode: a recovery failed, no request can be served any more.
  bool stopped() const { return verdict_ && verdict_->stopped; }

 private:
  // Whether `status` is a power cut that torture mode recovers from (then it did).
  bool recovered_from(const Status& status);
  // A fault injector over the chip, seeded for the next session, and the FTL routed through it.
  void power_cycle_injector();
  // A fresh chip over the same medium, as after a power cycle, and a fault injector over it.
  void power_cycle();
  // Reopens the FTL after a cut (cuts during recovery included) and checks every LPN.
  void recover();
  void check_recovered_state();
  void violation(std::string what);
  ConstByteSpan stamped(std::uint64_t lpn, std::uint32_t count, std::uint64_t version);
  std::size_t bytes(std::uint32_t count) const { return std::size_t{count} * geometry_.page_size_bytes; }

  SimConfig config_;
  Geometry geometry_;
  std::shared_ptr<PageStore> store_;
  SimClock clock_;  // before the chips, which borrow it
  std::unique_ptr<SimulatedChip> chip_;
  PowerSwitch switch_;
  std::unique_ptr<Ftl> ftl_;
  std::vector<std::uint8_t> buffer_;  // host data; zeros unless stamped (torture mode)

  FtlStats measured_;        // sessions before the current one
  FtlStats session_start_;   // the current session's stats when it began to count

  // Torture mode.
  std::optional<PowerCutVerdict> verdict_;
  std::optional<DurabilityOracle> oracle_;
  SeededRandom cut_seeds_;
  std::unique_ptr<FaultyChip> faulty_;
  SimClock check_clock_;                     // the checking chip's: checks take no simulated time
  std::unique_ptr<SimulatedChip> check_chip_;
  std::uint64_t next_version_ = 1;
};

}  // namespace flashdir::sim::detail
