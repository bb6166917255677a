// A NAND chip with the rules of real silicon, over any PageStore: checks every request,
// advances the simulated clock by the operation's latency and counts what it does.
#pragma once

#include <memory>

#include "flashdir/clock.h"
#include "flashdir/nand/chip.h"
#include "flashdir/nand/page_store.h"

namespace flashdir {

class SimulatedChip final : public NandChip {
 public:
  // The chip shares the store (a test may reopen it after a power cut) and borrows the clock,
  // which must outlive it.
  SimulatedChip(std::shared_ptr<PageStore> store, LatencyProfile latency, SimClock& clock);

  const Geometry& geometry() const override { return store_->geometry(); }
  bool stores_data() const override { return store_->stores_data(); }
  std::string_view backend_name() const override { return store_->backend_name(); }

  Status read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override;
  Status program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override;
  Status erase(BlockNumber block) override;
  Status sync() override { return store_->sync(); }

  // As the store allows: the image and memory stores do, the metadata-only store does not.
  bool concurrent_reads() const override { return store_->concurrent_reads(); }
  Status read_concurrently(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) const override;
  Status charge_reads(std::uint32_t pages) override;

  std::uint32_t next_page(BlockNumber block) const override;
  std::uint32_t erase_count(BlockNumber block) const override;
  const ChipCounters& counters() const override { return counters_; }
  LatencyProfile latency() const override { return latency_; }

 private:
  void account(std::uint64_t operations, std::uint32_t latency_us);

  std::shared_ptr<PageStore> store_;
  LatencyProfile latency_;
  SimClock& clock_;
  ChipCounters counters_;
};

}  // namespace flashdir
