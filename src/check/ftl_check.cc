#include "ftl_check.h"

#include <fmt/format.h>

#include "ftl/mapcache/entry_cache.h"
#include "ftl/checkpoint.h"
#include "ftl/layout.h"
#include "ftl/replay.h"
#include "bounded_list.h"
#include "flashdir/cache_dir.h"
#include "flashdir/ftl/ftl.h"

namespace flashdir {

namespace {

std::string describe_entry(std::uint32_t ppn) {
  if (ppn == ftl::kUnmappedPpn) return "nothing";
  if (ppn == ftl::kLostPpn) return "lost data";
  return fmt::format("page {}", ppn);
}

bool valid_at(const ftl::CheckpointState& checkpoint, Ppn page) {
  return (checkpoint.validity[page.value / 64] >> (page.value % 64)) & 1;
}

// Whether `page` was programmed before the checkpoint: every page of a block roll-forward did
// not scan was; in a scanned block, those whose sequence is below the checkpoint's counter.
Result<bool> predates(NandChip& chip, Ppn page, bool block_scanned, const ftl::CheckpointState& checkpoint) {
  if (!block_scanned) return true;
  std::vector<std::uint8_t> oob(chip.geometry().oob_size_bytes);
  FLASHDIR_TRY(chip.read(page, 1, {}, oob));
  auto record = format::decode_oob(oob);
  return record.is_ok() && record->sequence < checkpoint.next_sequence;
}

}  // namespace

FtlRepair check_ftl(NandChip& chip, const format::Superblock& superblock, const CheckOptions& options,
                    CheckReport& report) {
  auto layout = ftl::FtlLayout::compute(chip.geometry(), superblock.overprovision_permille);
  if (!layout.is_ok()) {
    report.errors.push_back(fmt::format("FTL layout: {}", layout.status().message()));
    return FtlRepair::refused;
  }
  ftl::CheckpointSlots slots(chip, *layout);
  std::vector<std::string> problems;
  auto loaded = slots.load_newest(&problems, ftl::CheckpointSlots::SlotsRead::both);
  for (const auto& p : problems) {
    report.notes.push_back(fmt::format("{} (a checkpoint torn by a power cut is replaced by the other slot)", p));
  }
  if (!loaded.is_ok()) {
    report.errors.push_back(fmt::format("FTL: {}", loaded.status().message()));
    return FtlRepair::rebuild;
  }
  if (Status s = ftl::check_checkpoint_layout(loaded->state, *layout, "the superblock records"); !s.is_ok()) {
    // Which of the two is wrong cannot be told; a rebuild would pick one layout and lose data.
    report.errors.push_back(fmt::format("FTL layout: {}; fsck does not rebuild across layouts", s.message()));
    return FtlRepair::refused;
  }
  FtlCheckSummary& summary = report.ftl;
  summary.checked = true;
  summary.checkpoint_generation = loaded->state.generation;
  summary.checkpoint_clean = !loaded->marked;
  summary.logical_pages = layout->logical_pages;

  auto from_checkpoint = ftl::replay_mapping(chip, *layout, &loaded->state);
  if (!from_checkpoint.is_ok()) {
    report.errors.push_back(fmt::format("FTL roll-forward: {}", from_checkpoint.status().message()));
    return FtlRepair::rebuild;
  }
  ftl::ReplayOptions scan_everything;
  scan_everything.record_page_owners = true;
  auto from_scan = ftl::replay_mapping(chip, *layout, nullptr, scan_everything);
  if (!from_scan.is_ok()) {
    report.errors.push_back(fmt::format("FTL full scan: {}", from_scan.status().message()));
    return FtlRepair::rebuild;
  }
  summary.rolled_forward_pages = from_checkpoint->report.replayed_data_pages + from_checkpoint->report.replayed_translation_pages;

  const std::size_t limit = options.max_listed_pages;
  std::size_t listed = 0;
  const auto& a = from_checkpoint->map;
  const auto& b = from_scan->map;
  const auto& owner = from_scan->page_owner;
  const Geometry& g = chip.geometry();
  std::vector<bool> claimed(g.page_count(), false);
  std::vector<std::uint32_t> valid(g.block_count, 0);
  const std::uint64_t errors_before = report.errors.size();
  std::size_t lost_listed = 0;
  for (std::uint64_t lpn = 0; lpn < a.size(); ++lpn) {
    if (a[lpn] != b[lpn]) {
      ++summary.mismatches;
      list(report.errors, listed, limit,
           fmt::format("LPN {}: the checkpoint and roll-forward map it to {}, a full scan to {}", lpn,
                       describe_entry(a[lpn]), describe_entry(b[lpn])));
    }
    if (a[lpn] == ftl::kLostPpn) {
      ++summary.lost_lpns;
      list(report.notes, lost_listed, limit,
           fmt::format("LPN {} is lost: its data failed verification or vanished; it reads as an error until "
                       "written or trimmed",
                       lpn));
      continue;
    }
    if (a[lpn] == ftl::kUnmappedPpn) continue;
    ++summary.mapped_pages;
    if (a[lpn] >= g.page_count() || owner[a[lpn]] != lpn) {
      list(report.errors, listed, limit, fmt::format("LPN {} maps to page {}, which does not hold it", lpn, a[lpn]));
      continue;
    }
    if (claimed[a[lpn]]) {
      list(report.errors, listed, limit, fmt::format("page {} is mapped by two LPNs (one is {})", a[lpn], lpn));
      continue;
    }
    claimed[a[lpn]] = true;
    ++valid[g.block_of(Ppn(a[lpn])).value];
  }
  for (std::uint64_t tpn = 0; tpn < from_checkpoint->gtd.size(); ++tpn) {
    const std::uint32_t ppn = from_checkpoint->gtd[tpn];
    if (ppn == ftl::kUnmappedPpn) continue;
    if (ppn >= g.page_count() || owner[ppn] != ftl::kTranslationOwner) {
      list(report.errors, listed, limit, fmt::format("translation page {} is mapped to page {}, which does not hold it", tpn, ppn));
      continue;
    }
    claimed[ppn] = true;
    ++valid[g.block_of(Ppn(ppn)).value];
  }
  const ftl::CheckpointState& checkpoint = loaded->state;
  for (std::uint64_t block = layout->pool_first_block; block < g.block_count; ++block) {
    // A clean checkpoint's valid counts must be exactly those of the mapping.
    if (!loaded->marked) {
      if (checkpoint.blocks[block].valid_pages != valid[block]) {
        list(report.errors, listed, limit,
             fmt::format("block {}: the checkpoint counts {} valid pages, the mapping {}", block,
                         checkpoint.blocks[block].valid_pages, valid[block]));
      }
      continue;
    }
    // After an unclean shutdown they moved on, but one way only for the pages the checkpoint
    // saw: such a page may have become invalid since, never valid again. Of those, the pages
    // valid in the recovered mapping must be among the ones valid in the checkpoint.
    std::uint32_t regained = 0;
    Ppn first_regained;
    for (std::uint32_t i = 0; i < g.pages_per_block; ++i) {
      const Ppn page = g.page_at(BlockNumber(block), i);
      if (!claimed[page.value] || valid_at(checkpoint, page)) continue;
      auto before = predates(chip, page, from_checkpoint->scanned[block], checkpoint);
      if (!before.is_ok()) {
        report.errors.push_back(fmt::format("FTL valid counts: {}", before.status().message()));
        return FtlRepair::rebuild;
      }
      if (*before && regained++ == 0) first_regained = page;
    }
    if (regained > 0) {
      list(report.errors, listed, limit,
           fmt::format("block {}: {} of its {} valid pages in the recovered mapping were invalid at checkpoint {} "
                       "(the first: page {}), which counts {} valid",
                       block, regained, valid[block], checkpoint.generation, first_regained.value,
                       checkpoint.blocks[block].valid_pages));
    }
  }
  if (listed > limit) report.errors.push_back(fmt::format("... and {} more FTL errors", listed - limit));
  if (lost_listed > limit) report.notes.push_back(fmt::format("... and {} more lost LPNs", lost_listed - limit));
  return report.errors.size() > errors_before ? FtlRepair::rebuild : FtlRepair::none_needed;
}

Status rebuild_ftl(NandChip& chip, const format::Superblock& superblock, std::size_t limit,
                   std::vector<std::string>& lost) {
  SimClock clock;
  auto ftl = Ftl::rebuild(chip, clock, ftl_options(superblock));
  if (!ftl.is_ok()) return ftl.status();
  const std::vector<Lpn> lost_lpns = (*ftl)->lost_lpns();
  std::size_t listed = 0;
  for (Lpn lpn : lost_lpns) {
    list(lost, listed, limit, fmt::format("LPN {} is lost: no intact copy of its newest data is left", lpn.value));
  }
  if (listed > limit) lost.push_back(fmt::format("... and {} more lost LPNs", listed - limit));
  return (*ftl)->close();
}

}  // namespace flashdir
