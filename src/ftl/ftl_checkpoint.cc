// Taking and writing checkpoints, and restoring the FTL's RAM state from one.
#include <algorithm>
#include <bit>
#include <cassert>
#include <numeric>

#include "mapcache/entry_cache.h"
#include "ftl_core.h"

namespace flashdir::ftl {

CheckpointState FtlCore::snapshot() const {
  CheckpointState state;
  state.generation = checkpoint_generation_ + 1;
  state.next_sequence = next_sequence_;
  state.write_sequence = write_sequence_;
  state.host_time = host_time_;
  state.overprovision_permille = layout_.overprovision_permille;
  state.logical_pages = layout_.logical_pages;
  state.gtd = gtd_;
  state.blocks.reserve(blocks_.block_count());
  for (std::uint64_t b = 0; b < blocks_.block_count(); ++b) state.blocks.push_back(blocks_.info(BlockNumber(b)));
  state.validity = blocks_.validity_words();
  state.lost.assign((layout_.logical_pages + 63) / 64, 0);
  for (std::uint64_t lpn : lost_lpns_) state.lost[lpn / 64] |= std::uint64_t{1} << (lpn % 64);
  return state;
}

Status FtlCore::write_checkpoint() {
  // Every dirty mapping entry reaches its translation page first, so that GTD plus translation
  // pages are the whole mapping.
  FLASHDIR_TRY(write_back_mapping());

  const CheckpointState state = snapshot();
  const int slot = 1 - checkpoint_slot_;
  auto pages = slots_.write(slot, state, next_sequence_);
  if (!pages.is_ok()) return fail(pages.status());
  checkpoint_slot_ = slot;
  checkpoint_generation_ = state.generation;
  checkpoint_pages_ = *pages;
  marker_pending_ = true;
  programs_since_checkpoint_ = 0;
  ++stats_.checkpoints;
  stats_.checkpoint_pages += *pages;
  return Status::ok();
}

void FtlCore::restore(const CheckpointState& state) {
  for (std::uint64_t b = 0; b < state.blocks.size(); ++b) blocks_.restore(BlockNumber(b), state.blocks[b]);
  blocks_.mutable_validity_words() = state.validity;
  gtd_ = state.gtd;
  next_sequence_ = state.next_sequence;
  write_sequence_ = state.write_sequence;
  durable_sequence_ = state.write_sequence;
  host_time_ = state.host_time;
  lost_lpns_.clear();
  for (std::uint64_t w = 0; w < state.lost.size(); ++w) {
    for (std::uint64_t bits = state.lost[w]; bits != 0; bits &= bits - 1) {
      lost_lpns_.insert(w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
    }
  }
}

void FtlCore::rebuild_policy_and_free_list() {
  free_blocks_ = {};
  frontiers_.fill(std::nullopt);
  std::vector<std::uint64_t> closed;
  for (std::uint64_t b = layout_.pool_first_block; b < blocks_.block_count(); ++b) {
    const BlockNumber block(b);
    const BlockInfo& info = blocks_.info(block);
    if (info.state == BlockState::free) {
      add_free_block(block);
    } else if (info.state == BlockState::closed) {
      closed.push_back(b);
    } else if (info.state == BlockState::open) {
      const Stream stream = info.kind == BlockKind::hot_data    ? Stream::hot
                            : info.kind == BlockKind::cold_data ? Stream::cold
                            : info.kind == BlockKind::gc_data   ? Stream::gc
                                                                : Stream::translation;
      auto& frontier = frontiers_[static_cast<std::size_t>(stream)];
      if (frontier) {
        blocks_.transition(block, BlockState::closed);  // one frontier per stream
        closed.push_back(b);
      } else {
        frontier = block;
      }
    }
  }
  // The policy's lists are in least-recently-invalidated order; replay that order.
  std::stable_sort(closed.begin(), closed.end(), [&](std::uint64_t a, std::uint64_t b) {
    return blocks_.info(BlockNumber(a)).last_invalidation_time < blocks_.info(BlockNumber(b)).last_invalidation_time;
  });
  for (std::uint64_t b : closed) policy_->block_closed(BlockNumber(b));
}

}  // namespace flashdir::ftl
