// What each chip operation of an FTL was about, numbered the way FaultyChip numbers them (one
// operation per page of a run, one per erase, reads included), classified by the OOB record
// the FTL programs. A test records a run without a cut to find where each step of the
// persistence protocol happened, then aims power cuts at those operations.
#pragma once

#include <cstdint>
#include <vector>

#include "flashdir/nand/chip.h"
#include "flashdir/nand/faulty_chip.h"

namespace flashdir::testing {

enum class OpKind {
  read,
  hot_data,  // host data, by the write stream the OOB records (src/ftl/allocation.cc)
  cold_data,
  gc_copy,
  consolidation,
  translation,
  checkpoint,       // a page of a checkpoint
  marker,           // the page after a checkpoint that says the chip changed since
  unknown_program,  // an OOB record that does not decode
  pool_erase,       // a block of the pool: GC
  slot_erase,       // a block of a checkpoint slot
};
const char* op_kind_name(OpKind kind);
inline bool is_host_data(OpKind kind) { return kind == OpKind::hot_data || kind == OpKind::cold_data; }

struct ChipOp {
  OpKind kind = OpKind::read;
  Ppn page;  // reads and programs
  BlockNumber block;
  std::uint64_t logical = 0;  // programs: the record's LPN, TPN or checkpoint generation
  std::uint64_t version = 0;  // programs: the record's data version
  // Erases: what the block's last page programmed in this log held (unknown_program if none).
  OpKind erased_block_held = OpKind::unknown_program;
};

class ChipOpLog final : public NandChip {
 public:
  // Borrows `inner`. Blocks below `pool_first_block` are checkpoint slots (ftl::FtlLayout).
  ChipOpLog(NandChip& inner, std::uint64_t pool_first_block);

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

  // Every operation handed to the inner chip, whether it succeeded or not.
  const std::vector<ChipOp>& ops() const { return ops_; }
  std::uint64_t count() const { return ops_.size(); }
  // The program that put what `page` holds there, if this log saw it; nullptr otherwise.
  const ChipOp* holding(Ppn page) const;
  // Aims the power cut of `faulty`, the chip this log wraps, at the operation of `kind` that
  // comes after `skip` others of that kind: a cut that reaches its step whatever the workload.
  void aim(FaultyChip& faulty, OpKind kind, std::uint64_t skip);

 private:
  // Counts an operation about to reach the chip at `offset` operations from now; fires the aim.
  void note(OpKind kind, std::uint64_t offset);

  NandChip& inner_;
  std::uint64_t pool_first_block_;
  FaultyChip* aimed_ = nullptr;
  OpKind aim_kind_ = OpKind::read;
  std::uint64_t aim_skip_ = 0;
  std::vector<ChipOp> ops_;
  std::vector<OpKind> last_program_;         // per block
  std::vector<std::uint64_t> page_program_;  // per page: index of its program in ops_, or kNone
};

}  // namespace flashdir::testing
