#include "block_mapping.h"

#include <algorithm>

#include "mapcache/entry_cache.h"

namespace flashdir::ftl {
namespace {

constexpr std::size_t kMaxCandidates = 64;

}  // namespace

BlockMapping::BlockMapping(bool enabled, const FtlLayout& layout, const FtlOptions& options, std::uint64_t cbmt_bytes,
                           FtlStats& stats)
    : enabled_(enabled),
      paper_bug_(options.reproduce_paper_cbmt_bug),
      layout_(layout),
      stats_(stats),
      cbmt_(enabled ? cbmt_bytes / kEntryBytes : 0),
      detector_(enabled ? layout.logical_pages / layout.geometry.pages_per_block + 1 : 0,
                options.cftl.read_hot_threshold != 0 ? options.cftl.read_hot_threshold
                                                     : layout.geometry.pages_per_block / 2,
                options.cftl.aging_period_requests != 0 ? options.cftl.aging_period_requests
                                                        : 4ULL * layout.geometry.pages_per_block),
      scattered_(enabled ? layout.logical_pages / layout.geometry.pages_per_block + 1 : 0, false) {}

std::optional<std::uint32_t> BlockMapping::lookup(Lpn lpn, Access access) {
  if (!enabled_) return std::nullopt;
  const std::uint32_t P = layout_.geometry.pages_per_block;
  const std::uint64_t lbn = lpn.value / P;
  if ((access == Access::write || access == Access::flush) && !paper_bug_) {
    page_mapped(lpn);
    return std::nullopt;
  }
  ++stats_.cbmt_lookups;
  const auto block = cbmt_.lookup(lbn);
  if (!block) return std::nullopt;
  ++stats_.cbmt_hits;
  return static_cast<std::uint32_t>(block->value * P + lpn.value % P);
}

void BlockMapping::page_mapped(Lpn lpn) {
  if (!enabled_) return;
  const std::uint64_t lbn = lpn.value / layout_.geometry.pages_per_block;
  scattered_[lbn] = false;  // the move may have laid it out whole
  // Called for every page written or moved: an empty CBMT (the usual case) costs no look-up.
  if (paper_bug_ || cbmt_.size() == 0 || !cbmt_.contains(lbn)) return;
  cbmt_.erase(lbn);
  ++stats_.conversions_to_page;
}

void BlockMapping::note_access(Lpn first, std::uint32_t count, Access access) {
  if (!enabled_) return;
  const std::uint32_t P = layout_.geometry.pages_per_block;
  for (std::uint64_t lpn = first.value; lpn < first.value + count;) {
    const std::uint64_t lbn = lpn / P;
    const std::uint64_t end = std::min<std::uint64_t>((lbn + 1) * P, first.value + count);
    detector_.record(lbn, static_cast<std::uint32_t>(end - lpn), access == Access::write);
    if (access == Access::read && wants(lbn)) {
      if (candidate_set_.size() < kMaxCandidates && candidate_set_.insert(lbn).second) candidates_.push_back(lbn);
      if (!scattered_[lbn]) unchecked_.push_back(lbn);
    }
    lpn = end;
  }
  detector_.end_request();
}

bool BlockMapping::wants(std::uint64_t lbn) const {
  return enabled_ && cbmt_.capacity() > 0 && !cbmt_.contains(lbn) && detector_.read_hot_write_cold(lbn);
}

std::optional<std::uint64_t> BlockMapping::candidate() {
  while (!candidates_.empty()) {
    const std::uint64_t lbn = candidates_.front();
    candidates_.pop_front();
    candidate_set_.erase(lbn);
    if (wants(lbn)) return lbn;
  }
  return std::nullopt;
}

void BlockMapping::add(std::uint64_t lbn, BlockNumber block) {
  if (enabled_) cbmt_.insert(lbn, block);
}

void BlockMapping::register_aligned(std::uint64_t first_lpn, std::span<const std::uint32_t> entries,
                                    const std::function<bool(std::uint64_t lbn)>& overridden) {
  if (!enabled_) return;
  const std::uint32_t P = layout_.geometry.pages_per_block;
  if (P > entries.size()) return;  // a logical block spans translation pages
  for (std::uint64_t offset = (P - first_lpn % P) % P; offset + P <= entries.size(); offset += P) {
    const std::uint64_t lbn = (first_lpn + offset) / P;
    if ((lbn + 1) * P > layout_.logical_pages || !wants(lbn) || overridden(lbn)) continue;
    const std::uint32_t start = entries[offset];
    if (!is_physical(start) || start % P != 0) continue;
    bool aligned = true;
    for (std::uint32_t i = 1; i < P && aligned; ++i) aligned = entries[offset + i] == start + i;
    if (!aligned) continue;
    cbmt_.insert(lbn, BlockNumber(start / P));
    ++stats_.conversions_to_block;
  }
}

void BlockMapping::register_laid_out(const HeldMapping& held) {
  for (const std::uint64_t lbn : unchecked_) {
    if (!wants(lbn)) continue;  // registered meanwhile, by a translation page loaded whole
    BlockNumber block(0);
    switch (layout_of(lbn, held, block)) {
      case Layout::whole:
        cbmt_.insert(lbn, block);
        ++stats_.conversions_to_block;
        break;
      case Layout::scattered:
        scattered_[lbn] = true;
        break;
      case Layout::unknown:
        break;
    }
  }
  unchecked_.clear();
}

BlockMapping::Layout BlockMapping::layout_of(std::uint64_t lbn, const HeldMapping& held, BlockNumber& block) const {
  const std::uint32_t P = layout_.geometry.pages_per_block;
  const std::uint64_t first = lbn * P;
  if (first + P > layout_.logical_pages) return Layout::scattered;  // a partial logical block, never block-mapped
  // Every held page must sit at its own offset of one block; any that does not decides it.
  std::optional<std::uint32_t> start;
  bool all_held = true;
  for (std::uint32_t i = 0; i < P; ++i) {
    const auto ppn = held(Lpn(first + i));
    if (!ppn) {
      all_held = false;
      continue;
    }
    if (!is_physical(*ppn) || *ppn % P != i || (start && *start != *ppn - i)) return Layout::scattered;
    start = *ppn - i;
  }
  if (!all_held) return Layout::unknown;
  block = BlockNumber(*start / P);
  return Layout::whole;
}

}  // namespace flashdir::ftl
