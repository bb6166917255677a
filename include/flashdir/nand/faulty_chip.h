// Fault injection as a wrapper around any chip, perturbing only what it must: a power cut
// at a chosen or random operation (the operation in flight torn or dropped, every later one
// failing with StatusCode::power_lost) and bit flips on reads. After a cut, reopening the
// medium under a fresh SimulatedChip shows exactly what a real chip would hold.
//
// Operations are counted per page (a run of n pages is n operations) and per erase, reads
// included, in the order they reach the chip; index 0 is the first.
#pragma once

#include <atomic>

#include <cstdint>
#include <limits>
#include <string>

#include "flashdir/nand/chip.h"
#include "flashdir/random.h"

namespace flashdir {

// What happens to the operation in flight when the power goes.
enum class InFlight {
  torn,     // program: a random prefix of (data, OOB) lands, the rest is garbage;
            // erase: the block is erased and a random prefix of its pages is left garbage
  dropped,  // nothing of it reaches the chip
  either,   // chosen at random at the cut
};

struct FaultPlan {
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

  std::uint64_t seed = 1;
  std::uint64_t cut_at_operation = kNever;  // the operation with this index is in flight
  std::uint64_t cut_one_in = 0;             // or each operation with probability 1/N (0: off)
  InFlight in_flight = InFlight::either;
  std::uint64_t bit_flip_one_in = 0;  // each page read flips one bit with probability 1/N
};

// What the cut did, for test oracles and for the demo's report.
struct CutReport {
  enum class Operation { read, program, erase };
  bool happened = false;
  std::uint64_t operation_index = 0;
  Operation operation = Operation::read;
  Ppn page;                              // program and read: the page in flight
  BlockNumber block;                     // erase: the block in flight; program/read: the page's block
  bool torn = false;                     // false: dropped (or a read, which changes nothing)
  std::uint32_t torn_prefix_bytes = 0;   // program: bytes of (data ++ OOB) that landed
  std::uint32_t torn_garbage_pages = 0;  // erase: pages [0, n) left garbage

  std::string describe() const;
};

class FaultyChip final : public NandChip {
 public:
  // Borrows `inner`, which must outlive the wrapper.
  FaultyChip(NandChip& inner, FaultPlan plan);

  const Geometry& geometry() const override { return inner_.geometry(); }
  bool stores_data() const override { return inner_.stores_data(); }
  std::string_view backend_name() const override { return inner_.backend_name(); }
  LatencyProfile latency() const override { return inner_.latency(); }

  Status read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override;
  Status program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override;
  Status erase(BlockNumber block) override;
  Status sync() override;

  std::uint32_t next_page(BlockNumber block) const override { return inner_.next_page(block); }
  std::uint32_t erase_count(BlockNumber block) const override { return inner_.erase_count(block); }
  const ChipCounters& counters() const override { return inner_.counters(); }

  // Moves the planned cut to operation `index` (one not reached yet): a test that recognises
  // an operation as it comes aims the cut at it.
  void cut_at_operation(std::uint64_t index) { plan_.cut_at_operation = index; }
  // The power goes during the next program, which lands as the plan's in_flight says. Safe to
  // call from any thread (the daemon's power_cut control file, while its engine runs the chip).
  void cut_at_next_program() { cut_next_program_.store(true, std::memory_order_release); }

  // Safe to ask from any thread (a test watching a chip the engine's flusher drives); the rest
  // of the chip is as single-threaded as the chip it wraps.
  bool power_lost() const { return power_lost_.load(std::memory_order_acquire); }
  const CutReport& cut() const { return cut_; }
  std::uint64_t operations() const { return operations_; }
  std::uint64_t bit_flips() const { return bit_flips_; }

 private:
  // Counts `n` upcoming operations; returns how many may proceed before the cut (n if none).
  std::uint64_t admit(std::uint64_t n);
  bool tear_in_flight();
  Status lost() const;
  Status tear_program(Ppn page, ConstByteSpan data, ConstByteSpan oob);
  Status tear_erase(BlockNumber block);
  void flip_bits(std::uint32_t count, ByteSpan data, ByteSpan oob);

  NandChip& inner_;
  FaultPlan plan_;
  SeededRandom random_;
  std::uint64_t operations_ = 0;
  std::atomic<bool> cut_next_program_{false};
  std::uint64_t bit_flips_ = 0;
  CutReport cut_;
  std::atomic<bool> power_lost_{false};  // cut_.happened, for other threads
};

}  // namespace flashdir
