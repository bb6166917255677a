#include "chip_op_log.h"

#include <algorithm>

#include "ftl/checkpoint.h"
#include "ftl/ftl_core.h"
#include "flashdir/format.h"

namespace flashdir::testing {
namespace {

constexpr std::uint64_t kNone = UINT64_MAX;

OpKind classify(const format::OobRecord& record) {
  switch (record.kind) {
    case format::PageKind::translation: return OpKind::translation;
    case format::PageKind::checkpoint: return record.aux == ftl::kMarkerPageIndex ? OpKind::marker : OpKind::checkpoint;
    case format::PageKind::data: break;
  }
  switch (static_cast<ftl::Stream>(record.aux)) {  // data pages record their write stream
    case ftl::Stream::hot: return OpKind::hot_data;
    case ftl::Stream::cold: return OpKind::cold_data;
    case ftl::Stream::gc: return OpKind::gc_copy;
    case ftl::Stream::consolidation: return OpKind::consolidation;
    case ftl::Stream::translation: break;
  }
  return OpKind::unknown_program;
}

}  // namespace

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::read: return "read";
    case OpKind::hot_data: return "hot host data";
    case OpKind::cold_data: return "cold host data";
    case OpKind::gc_copy: return "GC copy";
    case OpKind::consolidation: return "consolidation";
    case OpKind::translation: return "translation page";
    case OpKind::checkpoint: return "checkpoint";
    case OpKind::marker: return "checkpoint marker";
    case OpKind::unknown_program: return "program ?";
    case OpKind::pool_erase: return "GC erase";
    case OpKind::slot_erase: return "checkpoint slot erase";
  }
  return "?";
}

ChipOpLog::ChipOpLog(NandChip& inner, std::uint64_t pool_first_block)
    : inner_(inner),
      pool_first_block_(pool_first_block),
      last_program_(inner.geometry().block_count, OpKind::unknown_program),
      page_program_(inner.geometry().page_count(), kNone) {}

const ChipOp* ChipOpLog::holding(Ppn page) const {
  const std::uint64_t index = page_program_[page.value];
  return index == kNone ? nullptr : &ops_[index];
}

void ChipOpLog::aim(FaultyChip& faulty, OpKind kind, std::uint64_t skip) {
  aimed_ = &faulty;
  aim_kind_ = kind;
  aim_skip_ = skip;
}

void ChipOpLog::note(OpKind kind, std::uint64_t offset) {
  if (aimed_ == nullptr || kind != aim_kind_) return;
  if (aim_skip_-- > 0) return;
  aimed_->cut_at_operation(aimed_->operations() + offset);
  aimed_ = nullptr;
}

Status ChipOpLog::read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) {
  for (std::uint32_t i = 0; i < count; ++i) {
    note(OpKind::read, i);
    ops_.push_back({OpKind::read, first + i, geometry().block_of(first + i)});
  }
  return inner_.read(first, count, data, oob);
}

Status ChipOpLog::program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) {
  const std::size_t oob_bytes = geometry().oob_size_bytes;
  for (std::uint32_t i = 0; i < count && (i + 1) * oob_bytes <= oob.size(); ++i) {
    ChipOp op{OpKind::unknown_program, first + i, geometry().block_of(first + i)};
    if (auto record = format::decode_oob(oob.subspan(i * oob_bytes, oob_bytes)); record.is_ok()) {
      op.kind = classify(*record);
      op.logical = record->logical_number;
      op.version = record->version;
    }
    note(op.kind, i);
    last_program_[op.block.value] = op.kind;
    page_program_[op.page.value] = ops_.size();
    ops_.push_back(op);
  }
  return inner_.program(first, count, data, oob);
}

Status ChipOpLog::erase(BlockNumber block) {
  ChipOp op{block.value < pool_first_block_ ? OpKind::slot_erase : OpKind::pool_erase, geometry().first_page(block),
            block};
  op.erased_block_held = last_program_[block.value];
  last_program_[block.value] = OpKind::unknown_program;
  const Ppn first = geometry().first_page(block);
  std::fill_n(page_program_.begin() + static_cast<std::ptrdiff_t>(first.value), geometry().pages_per_block, kNone);
  note(op.kind, 0);
  ops_.push_back(op);
  return inner_.erase(block);
}

}  // namespace flashdir::testing
