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
                                                        : 4ULL * layout.geometry.pages_per_block) {}

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
  // Called for every page written or moved: an empty CBMT (the usual case) costs no look-up.
  if (!enabled_ || paper_bug_ || cbmt_.size() == 0) return;
  const std::uint64_t lbn = lpn.value / layout_.geometry.pages_per_block;
  if (!cbmt_.contains(lbn)) return;
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
    if (access == Access::read && wants(lbn) && candidate_set_.size() < kMaxCandidates &&
        candidate_set_.insert(lbn).second) {
      candidates_.push_back(lbn);
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

}  // namespace flashdir::ftl
