// A chip that takes as long in wall time as its simulated latency says: a wrapper that sleeps
// after each operation for the simulated time the inner chip charged its clock with. The daemon
// uses it for nand_latency=emulate, so that a mount feels as fast as the SSD it simulates. The
// FTL serialises chip calls, so the sleeps queue up as operations on one real chip would.
#pragma once

#include "flashdir/clock.h"
#include "flashdir/nand/chip.h"

namespace flashdir {

class RealTimeChip final : public NandChip {
 public:
  // `clock` is the one the inner chip advances; both outlive this wrapper.
  RealTimeChip(NandChip& inner, const SimClock& clock) : inner_(inner), clock_(clock) {}

  const Geometry& geometry() const override { return inner_.geometry(); }
  bool stores_data() const override { return inner_.stores_data(); }
  std::string_view backend_name() const override { return inner_.backend_name(); }
  LatencyProfile latency() const override { return inner_.latency(); }

  Status read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override;
  Status program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override;
  Status erase(BlockNumber block) override;
  Status sync() override { return inner_.sync(); }

  std::uint32_t next_page(BlockNumber block) const override { return inner_.next_page(block); }
  std::uint32_t erase_count(BlockNumber block) const override { return inner_.erase_count(block); }
  const ChipCounters& counters() const override { return inner_.counters(); }

 private:
  // Runs `operation` on the inner chip, then sleeps for the simulated time it took.
  template <typename Operation>
  Status paced(Operation operation);

  NandChip& inner_;
  const SimClock& clock_;
};

}  // namespace flashdir
