// The `dftl` and `cftl` schemes: an entry cache over the translation pages, with CFTL's
// CBMT and hot/cold detector on top.
#include <algorithm>
#include <deque>
#include <set>
#include <vector>

#include "cache/cbmt.h"
#include "cache/entry_cache.h"
#include "hot_cold_detector.h"
#include "mapper.h"

namespace flashdir::ftl {
namespace {

constexpr std::uint32_t kDftlEntryBytes = 8;   // LPN + PPN
constexpr std::uint32_t kCftlEntryBytes = 12;  // + consecutive field and LFU counter
constexpr std::uint32_t kCbmtEntryBytes = 8;   // LBN + PBN
constexpr std::size_t kMaxCandidates = 64;

EntryCacheOptions cache_options(bool cftl, const FtlOptions& options) {
  EntryCacheOptions o;
  const std::uint64_t cbmt_bytes = cftl ? options.mapping_cache_bytes * options.cftl.cbmt_share_percent / 100 : 0;
  o.capacity_bytes = options.mapping_cache_bytes - cbmt_bytes;
  o.entry_bytes = cftl ? kCftlEntryBytes : kDftlEntryBytes;
  o.consecutive = cftl;
  o.eviction = cftl ? EntryEviction::lfu : EntryEviction::lru;
  return o;
}

class EntryMapper final : public Mapper {
 public:
  EntryMapper(bool cftl, const FtlLayout& layout, const FtlOptions& options, TranslationPages& pages, FtlStats& stats)
      : cftl_(cftl),
        paper_bug_(options.reproduce_paper_cbmt_bug),
        layout_(layout),
        pages_(pages),
        stats_(stats),
        cache_(cache_options(cftl, options)),
        cbmt_(cftl ? options.mapping_cache_bytes * options.cftl.cbmt_share_percent / 100 / kCbmtEntryBytes : 0),
        detector_(cftl ? layout.logical_pages / layout.geometry.pages_per_block + 1 : 0,
                  options.cftl.read_hot_threshold != 0 ? options.cftl.read_hot_threshold
                                                       : layout.geometry.pages_per_block / 2,
                  options.cftl.aging_period_requests != 0 ? options.cftl.aging_period_requests
                                                          : 4ULL * layout.geometry.pages_per_block),
        buffer_(layout.entries_per_translation_page) {}

  Result<std::uint32_t> lookup(Lpn lpn, Access access) override {
    const std::uint32_t P = layout_.geometry.pages_per_block;
    if (cftl_) {
      const std::uint64_t lbn = lpn.value / P;
      // The paper's Algorithm 1 serves every request from the CBMT first and lets a write
      // update only the CPMT, so the next read of that page returns the old data. A write
      // drops the block mapping before anything else.
      if (access == Access::write && !paper_bug_) drop_block_mapping(lbn);
      if (access != Access::write || paper_bug_) {
        ++stats_.cbmt_lookups;
        if (auto block = cbmt_.lookup(lbn)) {
          ++stats_.cbmt_hits;
          return static_cast<std::uint32_t>(block->value * P + lpn.value % P);
        }
      }
    }
    ++stats_.mapping_lookups;
    if (auto hit = cache_.lookup(lpn)) {
      ++stats_.mapping_hits;
      return *hit;
    }
    const std::uint64_t tpn = layout_.tpn_of(lpn);
    FLASHDIR_TRY(pages_.read(tpn, buffer_));
    const std::uint64_t first = layout_.first_lpn_of_tpn(tpn).value;
    const std::uint64_t index = lpn.value - first;
    const std::uint32_t ppn = buffer_[index];
    std::uint32_t length = 1;
    if (cftl_) {
      // The consecutive field: how many following LPNs map to the following PPNs.
      while (index + length < buffer_.size() && first + index + length < layout_.logical_pages &&
             buffer_[index + length] == (ppn == kUnmappedPpn ? kUnmappedPpn : ppn + length)) {
        ++length;
      }
      register_aligned_blocks(first);
    }
    cache_.insert_clean(lpn, ppn, length);
    return ppn;
  }

  void set(Lpn lpn, std::uint32_t ppn) override {
    if (cftl_ && !paper_bug_) drop_block_mapping(lpn.value / layout_.geometry.pages_per_block);
    cache_.set(lpn, ppn);
  }

  Status relocate(std::span<const Relocation> moves) override {
    // Relocations join the cache as dirty entries, cached or not: a GC run's moves into the
    // same translation page then cost one write-back between them (DFTL's batch update),
    // when enforce_budget() runs after the GC run.
    for (const Relocation& m : moves) {
      if (cftl_) drop_block_mapping(m.lpn.value / layout_.geometry.pages_per_block);
      cache_.set(m.lpn, m.to);
    }
    return Status::ok();
  }

  Status enforce_budget() override {
    while (cache_.over_budget()) {
      const auto victim = cache_.victim();
      if (!victim) break;
      if (victim->dirty) FLASHDIR_TRY(write_back(layout_.tpn_of(victim->lpn)));
      cache_.remove(victim->lpn);
    }
    return Status::ok();
  }

  Status write_back(std::uint64_t tpn) override {
    const Lpn first = layout_.first_lpn_of_tpn(tpn);
    const auto next = cache_.next_dirty(first);
    if (!next || layout_.tpn_of(*next) != tpn) return Status::ok();
    FLASHDIR_TRY(pages_.read(tpn, buffer_));
    merge_dirty(tpn, buffer_);
    return pages_.write(tpn, buffer_);
  }

  Status write_back_all() override {
    for (auto lpn = cache_.next_dirty(Lpn(0)); lpn; lpn = cache_.next_dirty(*lpn)) {
      const std::uint64_t tpn = layout_.tpn_of(*lpn);
      FLASHDIR_TRY(write_back(tpn));
    }
    return Status::ok();
  }

  std::uint64_t dirty_translation_pages() const override {
    std::uint64_t count = 0;
    for (auto lpn = cache_.next_dirty(Lpn(0)); lpn; lpn = cache_.next_dirty(layout_.first_lpn_of_tpn(layout_.tpn_of(*lpn) + 1))) {
      ++count;
    }
    return count;
  }

  void merge_dirty(std::uint64_t tpn, std::span<std::uint32_t> entries) override {
    const Lpn first = layout_.first_lpn_of_tpn(tpn);
    for (const CachedRun& run : cache_.take_dirty(first, layout_.first_lpn_of_tpn(tpn + 1))) {
      for (std::uint32_t i = 0; i < run.length; ++i) {
        entries[run.lpn.value - first.value + i] = run.ppn == kUnmappedPpn ? kUnmappedPpn : run.ppn + i;
      }
    }
  }

  void note_access(Lpn first, std::uint32_t count, Access access) override {
    if (!cftl_) return;
    const std::uint32_t P = layout_.geometry.pages_per_block;
    for (std::uint64_t lpn = first.value; lpn < first.value + count;) {
      const std::uint64_t lbn = lpn / P;
      const std::uint64_t end = std::min<std::uint64_t>((lbn + 1) * P, first.value + count);
      detector_.record(lbn, static_cast<std::uint32_t>(end - lpn), access == Access::write);
      if (access == Access::read && wants_block_mapping(lbn) && candidate_set_.size() < kMaxCandidates &&
          candidate_set_.insert(lbn).second) {
        candidates_.push_back(lbn);
      }
      lpn = end;
    }
    detector_.end_request();
  }

  bool wants_block_mapping(std::uint64_t lbn) const override {
    return cftl_ && cbmt_.capacity() > 0 && !cbmt_.contains(lbn) && detector_.read_hot_write_cold(lbn);
  }

  std::optional<std::uint64_t> consolidation_candidate() override {
    while (!candidates_.empty()) {
      const std::uint64_t lbn = candidates_.front();
      candidates_.pop_front();
      candidate_set_.erase(lbn);
      if (wants_block_mapping(lbn)) return lbn;
    }
    return std::nullopt;
  }

  void register_block_mapping(std::uint64_t lbn, BlockNumber block) override {
    if (cftl_) cbmt_.insert(lbn, block);
  }

  std::uint64_t cache_bytes_used() const override { return cache_.bytes_used() + cbmt_.size() * kCbmtEntryBytes; }

 private:
  void drop_block_mapping(std::uint64_t lbn) {
    if (!cbmt_.contains(lbn)) return;
    cbmt_.erase(lbn);
    ++stats_.conversions_to_page;
  }

  // A logical block already laid out whole (pages in order from page 0 of one block) becomes
  // block-mapped for free once it is read-hot and write-cold (papers/cftl.txt 3.2).
  void register_aligned_blocks(std::uint64_t first_lpn_of_page) {
    const std::uint32_t P = layout_.geometry.pages_per_block;
    if (P > buffer_.size()) return;  // a logical block spans translation pages
    for (std::uint64_t offset = (P - first_lpn_of_page % P) % P; offset + P <= buffer_.size(); offset += P) {
      const std::uint64_t lbn = (first_lpn_of_page + offset) / P;
      if ((lbn + 1) * P > layout_.logical_pages || !wants_block_mapping(lbn)) continue;
      // Flash holds the truth only where no dirty cached entry overrides it.
      const auto dirty = cache_.next_dirty(Lpn(lbn * P));
      if (dirty && dirty->value < (lbn + 1) * P) continue;
      const std::uint32_t start = buffer_[offset];
      if (start == kUnmappedPpn || start % P != 0) continue;
      bool aligned = true;
      for (std::uint32_t i = 1; i < P && aligned; ++i) aligned = buffer_[offset + i] == start + i;
      if (!aligned) continue;
      cbmt_.insert(lbn, BlockNumber(start / P));
      ++stats_.conversions_to_block;
    }
  }

  bool cftl_;
  bool paper_bug_;
  const FtlLayout& layout_;
  TranslationPages& pages_;
  FtlStats& stats_;
  EntryCache cache_;
  Cbmt cbmt_;
  HotColdDetector detector_;
  std::vector<std::uint32_t> buffer_;
  std::deque<std::uint64_t> candidates_;
  std::set<std::uint64_t> candidate_set_;
};

}  // namespace

std::unique_ptr<Mapper> make_entry_mapper(format::MappingScheme scheme, const FtlLayout& layout,
                                          const FtlOptions& options, TranslationPages& pages, FtlStats& stats) {
  return std::make_unique<EntryMapper>(scheme == format::MappingScheme::cftl, layout, options, pages, stats);
}

}  // namespace flashdir::ftl
