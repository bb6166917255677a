// A chip that forwards every call to one of several views of the same medium, chosen by
// route(): flashdir-sim's torture mode hands the FTL this switch, routes it through a
// FaultyChip while the power may be cut and around it while the oracle reads the recovered
// state back. Every view must drive the same PageStore, so what one programs the others see.
#pragma once

#include "flashdir/nand/chip.h"

namespace flashdir::sim::detail {

class PowerSwitch final : public NandChip {
 public:
  explicit PowerSwitch(NandChip& target) : target_(&target) {}
  // Borrows `target`, which must outlive its use.
  void route(NandChip& target) { target_ = &target; }

  const Geometry& geometry() const override { return target_->geometry(); }
  bool stores_data() const override { return target_->stores_data(); }
  std::string_view backend_name() const override { return target_->backend_name(); }
  LatencyProfile latency() const override { return target_->latency(); }
  Status read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override {
    return target_->read(first, count, data, oob);
  }
  Status program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override {
    return target_->program(first, count, data, oob);
  }
  Status erase(BlockNumber block) override { return target_->erase(block); }
  Status sync() override { return target_->sync(); }
  std::uint32_t next_page(BlockNumber block) const override { return target_->next_page(block); }
  std::uint32_t erase_count(BlockNumber block) const override { return target_->erase_count(block); }
  const ChipCounters& counters() const override { return target_->counters(); }

 private:
  NandChip* target_;
};

}  // namespace flashdir::sim::detail
