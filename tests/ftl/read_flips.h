// Transient bit flips on reads, for tests: a chip wrapper that flips one data bit of a page as
// a read returns it (the medium keeps the right bits, so a second read is clean). At random
// (one read page in N) or aimed at the next read of a given page. FaultyChip's flips apply to
// every operation of its life; this one can be switched on for a stretch, e.g. a recovery.
#pragma once

#include <cstdint>
#include <optional>

#include "flashdir/nand/chip.h"
#include "flashdir/random.h"

namespace flashdir::testing {

class ReadFlips final : public NandChip {
 public:
  // Borrows `inner`, which must outlive the wrapper. Flips nothing until told to.
  ReadFlips(NandChip& inner, std::uint64_t seed) : inner_(inner), random_(seed) {}

  // Each page a read returns gets one bit flipped with probability 1/one_in (0: never).
  void flip_one_in(std::uint64_t one_in) { one_in_ = one_in; }
  // The next read that returns `page` flips one bit of its data.
  void flip_next_read_of(Ppn page) { aimed_ = page; }
  std::uint64_t flips() const { return flips_; }

  const Geometry& geometry() const override { return inner_.geometry(); }
  bool stores_data() const override { return inner_.stores_data(); }
  std::string_view backend_name() const override { return inner_.backend_name(); }
  LatencyProfile latency() const override { return inner_.latency(); }
  Status read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override;
  Status program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override {
    return inner_.program(first, count, data, oob);
  }
  Status erase(BlockNumber block) override { return inner_.erase(block); }
  Status sync() override { return inner_.sync(); }
  std::uint32_t next_page(BlockNumber block) const override { return inner_.next_page(block); }
  std::uint32_t erase_count(BlockNumber block) const override { return inner_.erase_count(block); }
  const ChipCounters& counters() const override { return inner_.counters(); }

 private:
  NandChip& inner_;
  SeededRandom random_;
  std::uint64_t one_in_ = 0;
  std::optional<Ppn> aimed_;
  std::uint64_t flips_ = 0;
};

}  // namespace flashdir::testing
