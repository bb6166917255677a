// Recovery: replay what the chip holds (since a checkpoint, or from nothing for fsck -y), bring
// the block table up to date, write the translation pages that changed, checkpoint.
//
// From a checkpoint, recovery first tries to move the checkpoint's block table forward: only
// the translation pages the replayed pages touch are read, and the validity bitmap changes
// only where the mapping did. That is sound only if every page the checkpoint held valid in a
// block erased since was the old place of something the replay remapped (GC moved it, and the
// move was replayed); `forward_validity` proves it page by page, and where it cannot (or the
// sparse replay could not be done) recovery rebuilds everything from the whole map, as fsck's
// rebuild does. doc/ftl.md, "Recovery".
#include <algorithm>
#include <bit>
#include <fmt/format.h>

#include "mapcache/entry_cache.h"
#include "ftl_core.h"
#include "replay.h"

namespace flashdir::ftl {
namespace {

// The validity bitmap after the replay `r` from checkpoint `base`, or why it cannot be proven
// from the checkpoint's (then `validity` is meaningless).
std::string forward_validity(const Replayed& r, const CheckpointState& base, const FtlLayout& layout, NandChip& chip,
                             std::vector<std::uint64_t>& validity) {
  const Geometry& g = layout.geometry;
  auto bit = [](const std::vector<std::uint64_t>& words, std::uint32_t ppn) { return (words[ppn / 64] >> (ppn % 64)) & 1; };
  auto clear = [](std::vector<std::uint64_t>& words, std::uint32_t ppn) { words[ppn / 64] &= ~(std::uint64_t{1} << (ppn % 64)); };
  auto rewritten = [&](std::uint32_t ppn) { return r.rewritten[g.block_of(Ppn(ppn)).value]; };

  // A block erased since the checkpoint starts with no valid page; `unaccounted` keeps the
  // pages the checkpoint held valid there until a replayed remapping accounts for each.
  validity = base.validity;
  std::vector<std::uint64_t> unaccounted(validity.size(), 0);
  for (std::uint64_t b = layout.pool_first_block; b < g.block_count; ++b) {
    if (!r.rewritten[b]) continue;
    for (std::uint64_t p = b * g.pages_per_block; p < (b + 1) * g.pages_per_block; ++p) {
      const std::uint64_t mask = std::uint64_t{1} << (p % 64);
      unaccounted[p / 64] |= validity[p / 64] & mask;
      validity[p / 64] &= ~mask;
    }
  }

  // Every entry the replay changed: (old, new). An entry naming the same page of a block erased
  // since is a change too (the page was programmed again) if the page now holds what the entry
  // maps, a copy the replay saw; otherwise it names what the checkpoint knew, now gone: not
  // proven here (the full rebuild decides).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> changes;
  std::string unproven;
  std::vector<std::uint8_t> oob(g.oob_size_bytes);
  auto holds_now = [&](std::uint32_t ppn, format::PageKind kind, std::uint64_t logical) {
    if (!chip.read(Ppn(ppn), 1, {}, oob).is_ok()) return false;
    auto record = format::decode_oob(oob);
    return record.is_ok() && record->kind == kind && record->logical_number == logical &&
           record->sequence >= base.next_sequence;
  };
  auto consider = [&](std::uint32_t before, std::uint32_t after, format::PageKind kind, std::uint64_t logical) {
    if (before != after) {
      changes.emplace_back(before, after);
    } else if (is_physical(before) && (before >= g.page_count() || rewritten(before))) {
      if (before < g.page_count() && holds_now(before, kind, logical)) {
        changes.emplace_back(before, after);
      } else if (unproven.empty()) {
        unproven = fmt::format("an entry still names page {}, whose block was erased since the checkpoint", before);
      }
    }
  };
  for (std::uint64_t tpn = 0; tpn < layout.translation_pages; ++tpn) {
    consider(base.gtd[tpn], r.gtd[tpn], format::PageKind::translation, tpn);
  }
  const std::uint64_t E = layout.entries_per_translation_page;
  for (const auto& [tpn, before] : r.checkpoint_content) {
    for (std::uint64_t i = 0; i < E && tpn * E + i < layout.logical_pages; ++i) {
      consider(before[i], r.map[tpn * E + i], format::PageKind::data, tpn * E + i);
    }
  }
  if (!unproven.empty()) return unproven;

  // Old places first (a new one may reuse a PPN an old one frees), then new places.
  for (const auto& [before, after] : changes) {
    if (!is_physical(before)) continue;
    if (before >= g.page_count() || !bit(base.validity, before)) {
      return fmt::format("the checkpoint maps something to page {}, which it does not hold valid", before);
    }
    clear(rewritten(before) ? unaccounted : validity, before);
  }
  for (const auto& [before, after] : changes) {
    if (!is_physical(after)) continue;
    const Ppn page(after);
    const BlockNumber block = g.block_of(page);
    if (after >= g.page_count() || !layout.in_pool(block) || g.page_in_block(page) >= chip.next_page(block)) {
      return fmt::format("a replayed mapping names page {}, which is not programmed", after);
    }
    if (bit(validity, after)) return fmt::format("page {} is mapped twice", after);
    validity[after / 64] |= std::uint64_t{1} << (after % 64);
  }
  for (std::uint64_t w = 0; w < unaccounted.size(); ++w) {
    if (unaccounted[w] != 0) {
      const std::uint64_t ppn = w * 64 + static_cast<std::uint64_t>(std::countr_zero(unaccounted[w]));
      return fmt::format("page {} was valid at the checkpoint, its block was erased since, and no replayed page "
                         "remaps what it held",
                         ppn);
    }
  }
  return {};
}

}  // namespace

Status FtlCore::recover(const CheckpointSlots::Loaded& loaded) {
  const std::uint64_t started = clock_.now_ns();
  ReplayOptions sparse;
  sparse.verify_data = false;  // the pages' own reads verify their data
  sparse.sparse = true;
  auto replayed = replay_mapping(chip_, layout_, &loaded.state, sparse);
  if (!replayed.is_ok()) return fail(replayed.status());
  std::string why_not = replayed->not_sparse;
  std::vector<std::uint64_t> validity;
  if (why_not.empty()) why_not = forward_validity(replayed.value(), loaded.state, layout_, chip_, validity);
  if (why_not.empty()) {
    return adopt_forward(std::move(replayed).value(), loaded, std::move(validity), started);
  }
  recovery_.steps.push_back("the checkpoint's block table cannot be moved forward (" + why_not +
                            "): rebuilding it from the whole mapping");
  ReplayOptions records_only;
  records_only.verify_data = false;
  auto whole = replay_mapping(chip_, layout_, &loaded.state, records_only);
  if (!whole.is_ok()) return fail(whole.status());
  restore(loaded.state);
  return adopt(std::move(whole).value(), &loaded.state, loaded.highest_sequence, started);
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

void FtlCore::restore_block_states(const Replayed& r, const CheckpointState* base) {
  // What the chip holds now, with the checkpoint's history where a block has not been touched
  // since. Partly written frontiers are closed; new ones open on demand.
  for (std::uint64_t b = 0; b < layout_.geometry.block_count; ++b) {
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
}

void FtlCore::resume_after_replay(const Replayed& r, const CheckpointState* base, std::uint64_t checkpoint_highest_sequence) {
  policy_ = make_gc_policy(options_.gc, blocks_);
  rebuild_policy_and_free_list();
  const std::uint64_t base_next = base != nullptr ? base->next_sequence : 1;
  next_sequence_ = std::max({base_next, r.highest_sequence + 1, checkpoint_highest_sequence + 1});
  write_sequence_ = std::max(base != nullptr ? base->write_sequence : 0, r.highest_version);
  durable_sequence_ = write_sequence_;
  host_time_ = (base != nullptr ? base->host_time : 0) + r.host_pages_seen;
  marker_pending_ = false;  // the marker that sent us here is on the chip already (or no checkpoint is)
  checkpoint_pages_ = 0;
}

Status FtlCore::adopt_forward(Replayed r, const CheckpointSlots::Loaded& loaded, std::vector<std::uint64_t> validity,
                              std::uint64_t started) {
  const CheckpointState& base = loaded.state;
  std::vector<std::string> steps = std::move(recovery_.steps);
  recovery_ = r.report;
  recovery_.steps = std::move(steps);
  recovery_.checkpoint_generation = base.generation;
  recovery_.moved_forward = true;
  recovery_.steps.push_back(fmt::format("roll forward over the touched translation pages: {:.3f} ms",
                                        static_cast<double>(clock_.now_ns() - started) / 1e6));
  restore(base);
  gtd_ = r.gtd;
  restore_block_states(r, &base);
  blocks_.mutable_validity_words() = std::move(validity);
  blocks_.recount_valid_pages();

  // Lost LPNs: the checkpoint's, updated for every entry the replay touched.
  for (const auto& [tpn, before] : r.checkpoint_content) {
    const std::uint64_t first = tpn * layout_.entries_per_translation_page;
    const std::uint64_t end = std::min<std::uint64_t>(first + layout_.entries_per_translation_page, layout_.logical_pages);
    for (std::uint64_t lpn = first; lpn < end; ++lpn) {
      if (r.map[lpn] != kLostPpn) {
        lost_lpns_.erase(lpn);
      } else if (lost_lpns_.insert(lpn).second) {
        newly_lost_lpns_.insert(lpn);
      }
    }
  }
  recovery_.lost_lpns = lost_lpns_.size();
  resume_after_replay(r, &base, loaded.highest_sequence);

  // The translation pages hold the mapping as of their newest replayed version; what data
  // pages mapped after it becomes dirty RAM state, written back with the checkpoint.
  FLASHDIR_TRY(install_ram());
  for (std::uint64_t lpn : r.mapped_since_translation) {
    auto current = ram_->lookup(Lpn(lpn), Access::flush);
    if (!current.is_ok()) return fail(current.status());
    ram_->set(Lpn(lpn), r.map[lpn]);
  }
  FLASHDIR_TRY(settle());
  FLASHDIR_TRY(write_checkpoint());
  recovery_.steps.push_back(fmt::format("write translation pages and checkpoint: {:.3f} ms",
                                        static_cast<double>(clock_.now_ns() - started) / 1e6));
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

  gtd_ = r.gtd;
  restore_block_states(r, base);
  blocks_.clear_validity();
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
  resume_after_replay(r, base, checkpoint_highest_sequence);
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
