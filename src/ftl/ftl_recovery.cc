// Recovery: replay what the chip holds (since a checkpoint, or from nothing for fsck -y),
// rebuild the block table from the replayed mapping, write the translation pages that changed,
// checkpoint.
#include <algorithm>
#include <fmt/format.h>

#include "mapcache/entry_cache.h"
#include "ftl_core.h"
#include "replay.h"

namespace flashdir::ftl {

Status FtlCore::recover(const CheckpointSlots::Loaded& loaded) {
  const std::uint64_t started = clock_.now_ns();
  ReplayOptions records_only;  // the pages' own reads verify their data
  records_only.verify_data = false;
  auto replayed = replay_mapping(chip_, layout_, &loaded.state, records_only);
  if (!replayed.is_ok()) return fail(replayed.status());
  restore(loaded.state);
  return adopt(std::move(replayed).value(), &loaded.state, loaded.highest_sequence, started);
}

Status FtlCore::rebuild_from_scan() {
  const std::uint64_t started = clock_.now_ns();
  recovery_ = RecoveryReport{};
  // The new checkpoint goes after whatever valid one the slots still hold.
  if (auto loaded = slots_.load_newest(); loaded.is_ok()) {
    // A valid checkpoint says how the FTL was laid out: never rebuild with another layout.
    FLASHDIR_TRY(check_checkpoint_layout(loaded->state, layout_, "the options ask for"));
    checkpoint_slot_ = loaded->slot;
    checkpoint_generation_ = loaded->state.generation;
  } else {
    checkpoint_slot_ = 1;
    checkpoint_generation_ = 0;
  }
  ReplayOptions scan_everything;
  scan_everything.record_page_owners = true;  // adopt() verifies every mapping against it
  auto replayed = replay_mapping(chip_, layout_, nullptr, scan_everything);
  if (!replayed.is_ok()) return fail(replayed.status());
  const std::vector<std::uint64_t> damaged = replayed->damaged_blocks;
  FLASHDIR_TRY(adopt(std::move(replayed).value(), nullptr, 0, started));

  // Nothing rewrites a damaged page, so collect every block holding one: its valid pages move,
  // it is erased, and the chip holds nothing damaged any more (fsck -y leaves a clean chip).
  const std::uint64_t scrub_started = clock_.now_ns();
  for (std::uint64_t b : damaged) {
    FLASHDIR_TRY(ensure_free_blocks(1));  // GC may collect the block itself
    if (blocks_.info(BlockNumber(b)).state != BlockState::closed) continue;
    in_gc_ = true;  // the collection's writes draw on the reserve
    const Status collected = collect(BlockNumber(b));
    in_gc_ = false;
    FLASHDIR_TRY(collected);
  }
  FLASHDIR_TRY(settle());
  recovery_.steps.push_back(fmt::format("collect {} blocks holding damaged pages: {:.3f} ms", damaged.size(),
                                        static_cast<double>(clock_.now_ns() - scrub_started) / 1e6));
  return Status::ok();
}

Status FtlCore::adopt(Replayed r, const CheckpointState* base, std::uint64_t checkpoint_highest_sequence,
                      std::uint64_t started) {
  const Geometry& g = layout_.geometry;
  std::uint64_t step_started = started;
  auto step_done = [&](const char* what) {
    recovery_.steps.push_back(fmt::format("{}: {:.3f} ms", what, static_cast<double>(clock_.now_ns() - step_started) / 1e6));
    step_started = clock_.now_ns();
  };
  std::vector<std::string> steps = std::move(recovery_.steps);
  const std::uint64_t generation = recovery_.checkpoint_generation;
  recovery_ = r.report;
  recovery_.steps = std::move(steps);
  recovery_.checkpoint_generation = generation;
  step_done(base != nullptr ? "roll forward" : "replay a full scan");

  // Block states: what the chip holds now, with the checkpoint's history where a block has not
  // been touched since. Partly written frontiers are closed; new ones open on demand.
  gtd_ = r.gtd;
  blocks_.clear_validity();
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    const BlockNumber block(b);
    BlockInfo info;
    if (!layout_.in_pool(block)) {
      info.state = BlockState::reserved;
    } else if (chip_.next_page(block) > 0) {
      info.state = BlockState::closed;
      const bool known = base != nullptr && !r.scanned[b] && base->blocks[b].kind != BlockKind::none;
      if (known) {
        info.kind = base->blocks[b].kind;
        info.first_program_time = base->blocks[b].first_program_time;
        info.last_invalidation_time = base->blocks[b].last_invalidation_time;
      } else {
        info.kind = r.scanned_kind[b] != BlockKind::none ? r.scanned_kind[b] : BlockKind::cold_data;
        info.first_program_time = info.last_invalidation_time = base != nullptr ? base->host_time : 0;
      }
    }
    blocks_.restore(block, info);
  }
  auto claim = [&](std::uint32_t ppn) {
    const Ppn page(ppn);
    const BlockNumber block = g.block_of(page);
    if (ppn >= g.page_count() || !layout_.in_pool(block) || g.page_in_block(page) >= chip_.next_page(block)) {
      ++recovery_.dangling_mappings;
      return false;
    }
    if (blocks_.is_valid(page)) {
      ++recovery_.shared_pages;
      return false;
    }
    blocks_.mark_valid(page);
    return true;
  };
  // A mapping whose page is gone, or (after a full scan, which knows every page's owner) does
  // not hold its LPN, loses that LPN: it must read as an error, never as zeros (doc/ftl.md).
  auto holds = [&](std::uint64_t lpn, std::uint32_t ppn) {
    if (r.page_owner.empty() || ppn >= r.page_owner.size() || r.page_owner[ppn] == lpn) return true;
    ++recovery_.unverified_mappings;
    return false;
  };
  std::vector<std::uint64_t> dirty = r.dirty_tpns;
  lost_lpns_.clear();
  for (std::uint64_t lpn = 0; lpn < r.map.size(); ++lpn) {
    if (is_physical(r.map[lpn]) && !(holds(lpn, r.map[lpn]) && claim(r.map[lpn]))) {
      r.map[lpn] = kLostPpn;
      dirty.push_back(layout_.tpn_of(Lpn(lpn)));
    }
    if (r.map[lpn] != kLostPpn) continue;
    lost_lpns_.insert(lpn);
    const bool lost_before = base != nullptr && ((base->lost[lpn / 64] >> (lpn % 64)) & 1);
    if (!lost_before) newly_lost_lpns_.insert(lpn);
  }
  recovery_.lost_lpns = lost_lpns_.size();
  for (std::uint64_t tpn = 0; tpn < gtd_.size(); ++tpn) {
    if (gtd_[tpn] != kUnmappedPpn && !claim(gtd_[tpn])) {
      gtd_[tpn] = kUnmappedPpn;
      dirty.push_back(tpn);
    }
  }
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  policy_ = make_gc_policy(options_.gc, blocks_);
  rebuild_policy_and_free_list();
  const std::uint64_t base_next = base != nullptr ? base->next_sequence : 1;
  next_sequence_ = std::max({base_next, r.highest_sequence + 1, checkpoint_highest_sequence + 1});
  write_sequence_ = std::max(base != nullptr ? base->write_sequence : 0, r.highest_version);
  durable_sequence_ = write_sequence_;
  host_time_ = (base != nullptr ? base->host_time : 0) + r.host_pages_seen;
  marker_pending_ = false;  // the marker that sent us here is on the chip already (or no checkpoint is)
  checkpoint_pages_ = 0;
  step_done("rebuild block table");

  // The whole replayed map serves, without write buffer, until the checkpoint has written
  // every changed translation page; GC may run meanwhile and sees a consistent mapping.
  auto temporary = ram::make_recovery_ram(layout_, *this, stats_, std::move(r.map), std::move(dirty));
  if (!temporary.is_ok()) return fail(temporary.status());
  ram_ = std::move(temporary).value();
  FLASHDIR_TRY(write_checkpoint());
  step_done("write translation pages and checkpoint");
  FLASHDIR_TRY(install_ram());
  return Status::ok();
}

}  // namespace flashdir::ftl
