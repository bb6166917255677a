// The `dftl` and `cftl` schemes: an entry cache over the translation pages, with CFTL's
// CBMT and hot/cold detector on top.
#include <algorithm>
#include <vector>

#include "block_mapping.h"
#include "cache/entry_cache.h"
#include "mapper.h"

namespace flashdir::ftl {
namespace {

constexpr std::uint32_t kDftlEntryBytes = 8;   // LPN + PPN
constexpr std::uint32_t kCftlEntryBytes = 12;  // + consecutive field and LFU counter

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
        layout_(layout),
        pages_(pages),
        stats_(stats),
        cache_(cache_options(cftl, options)),
        blocks_(cftl, layout, options, options.mapping_cache_bytes * options.cftl.cbmt_share_percent / 100, stats),
        buffer_(layout.entries_per_translation_page) {}

  Result<std::uint32_t> lookup(Lpn lpn, Access access) override {
    if (auto ppn = blocks_.lookup(lpn, access)) return *ppn;
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
      blocks_.register_aligned(first, buffer_, [this](std::uint64_t lbn) {
        const std::uint32_t P = layout_.geometry.pages_per_block;
        const auto dirty = cache_.next_dirty(Lpn(lbn * P));  // flash is the truth only where RAM is clean
        return dirty && dirty->value < (lbn + 1) * P;
      });
    }
    cache_.insert_clean(lpn, ppn, length);
    return ppn;
  }

  void set(Lpn lpn, std::uint32_t ppn) override {
    blocks_.page_mapped(lpn);
    cache_.set(lpn, ppn);
  }

  Status relocate(std::span<const Relocation> moves) override {
    // Relocations join the cache as dirty entries, cached or not: a GC run's moves into the
    // same translation page then cost one write-back between them (DFTL's batch update),
    // when enforce_budget() runs after the GC run.
    for (const Relocation& m : moves) {
      blocks_.page_mapped(m.lpn);
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

  void note_access(Lpn first, std::uint32_t count, Access access) override { blocks_.note_access(first, count, access); }
  bool wants_block_mapping(std::uint64_t lbn) const override { return blocks_.wants(lbn); }
  std::optional<std::uint64_t> consolidation_candidate() override { return blocks_.candidate(); }
  void register_block_mapping(std::uint64_t lbn, BlockNumber block) override { blocks_.add(lbn, block); }

  std::uint64_t cache_bytes_used() const override { return cache_.bytes_used() + blocks_.bytes_used(); }

 private:
  bool cftl_;
  const FtlLayout& layout_;
  TranslationPages& pages_;
  FtlStats& stats_;
  EntryCache cache_;
  BlockMapping blocks_;
  std::vector<std::uint32_t> buffer_;
};

}  // namespace

std::unique_ptr<Mapper> make_entry_mapper(format::MappingScheme scheme, const FtlLayout& layout,
                                          const FtlOptions& options, TranslationPages& pages, FtlStats& stats) {
  return std::make_unique<EntryMapper>(scheme == format::MappingScheme::cftl, layout, options, pages, stats);
}

}  // namespace flashdir::ftl
