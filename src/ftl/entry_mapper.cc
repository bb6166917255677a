// The `dftl` and `cftl` schemes: an entry cache over the translation pages, with CFTL's
// CBMT and hot/cold detector on top.
#include <algorithm>
#include <vector>

#include "block_mapping.h"
#include "mapcache/entry_cache.h"
#include "mapper.h"

namespace flashdir::ftl {
namespace {

EntryCacheOptions cache_options(bool cftl, const FtlLayout& layout, std::uint64_t capacity_bytes,
                                std::uint64_t cbmt_bytes) {
  EntryCacheOptions o;
  o.capacity_bytes = capacity_bytes > cbmt_bytes ? capacity_bytes - cbmt_bytes : 0;
  o.entry_bytes = mapping_entry_bytes(cftl ? format::MappingScheme::cftl : format::MappingScheme::dftl);
  o.consecutive = cftl;
  o.eviction = cftl ? EntryEviction::lfu : EntryEviction::lru;
  o.translation_page_entries = layout.entries_per_translation_page;
  return o;
}

class EntryMapper final : public Mapper {
 public:
  EntryMapper(bool cftl, const FtlLayout& layout, const FtlOptions& options, TranslationPages& pages, FtlStats& stats,
              std::uint64_t capacity_bytes, std::uint64_t cbmt_bytes)
      : cftl_(cftl),
        layout_(layout),
        pages_(pages),
        stats_(stats),
        cache_(cache_options(cftl, layout, capacity_bytes, cftl ? cbmt_bytes : 0)),
        cbmt_bytes_(cftl ? cbmt_bytes : 0),
        blocks_(cftl, layout, options, cbmt_bytes_, stats),
        buffer_(layout.entries_per_translation_page),
        has_dirty_(layout.translation_pages, false),
        host_dirty_(layout.translation_pages, false) {}

  Result<std::uint32_t> lookup(Lpn lpn, Access access) override {
    if (auto ppn = blocks_.lookup(lpn, access)) return *ppn;
    const auto hit = cache_.lookup(lpn);
    count_lookup(stats_, access, hit.has_value());
    if (observer_ != nullptr) observer_->looked_up(lpn, access, hit.has_value());
    if (hit) return *hit;
    const std::uint64_t tpn = layout_.tpn_of(lpn);
    FLASHDIR_TRY(pages_.read(tpn, buffer_));
    const std::uint64_t first = layout_.first_lpn_of_tpn(tpn).value;
    const std::uint64_t index = lpn.value - first;
    const std::uint32_t ppn = buffer_[index];
    std::uint32_t length = 1;
    if (cftl_) {
      // The consecutive field: how many following LPNs map to the following PPNs.
      while (index + length < buffer_.size() && first + index + length < layout_.logical_pages &&
             buffer_[index + length] == run_entry(ppn, length)) {
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
    mark_dirty(lpn);
    host_dirty_[layout_.tpn_of(lpn)] = true;
  }

  Status relocate(std::span<const Relocation> moves) override {
    // Relocations join the cache as dirty entries, cached or not: a GC run's moves into the
    // same translation page then cost one write-back between them (DFTL's batch update),
    // when enforce_budget() runs after the GC run.
    for (const Relocation& m : moves) {
      blocks_.page_mapped(m.lpn);
      cache_.set(m.lpn, m.to);
      mark_dirty(m.lpn);
    }
    return Status::ok();
  }

  Status enforce_budget() override {
    while (cache_.over_budget()) {
      const auto victim = cache_.victim();
      if (!victim) break;
      if (victim->dirty) FLASHDIR_TRY(write_back(layout_.tpn_of(victim->lpn)));
      cache_.remove(victim->lpn);
      ++stats_.evicted_mapping_entries;
      if (observer_ != nullptr) observer_->evicted(victim->lpn, victim->length);
    }
    return Status::ok();
  }

  Status write_back(std::uint64_t tpn) override {
    const Lpn first = layout_.first_lpn_of_tpn(tpn);
    const auto next = cache_.next_dirty(first);
    if (!next || layout_.tpn_of(*next) != tpn) return Status::ok();
    const GcCharge charge(pages_, !host_dirty_[tpn]);  // only relocations dirtied it: GC's I/O
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

  std::uint64_t dirty_translation_pages() const override { return dirty_pages_; }

  void merge_dirty(std::uint64_t tpn, std::span<std::uint32_t> entries) override {
    const Lpn first = layout_.first_lpn_of_tpn(tpn);
    const std::vector<CachedRun> dirty = cache_.take_dirty(first, layout_.first_lpn_of_tpn(tpn + 1));
    if (has_dirty_[tpn]) {
      has_dirty_[tpn] = false;
      --dirty_pages_;
    }
    host_dirty_[tpn] = false;
    if (observer_ != nullptr && !dirty.empty()) observer_->wrote_back(dirty.size());
    for (const CachedRun& run : dirty) {
      for (std::uint32_t i = 0; i < run.length; ++i) {
        entries[run.lpn.value - first.value + i] = run_entry(run.ppn, i);
      }
    }
  }

  void note_access(Lpn first, std::uint32_t count, Access access) override { blocks_.note_access(first, count, access); }
  bool wants_block_mapping(std::uint64_t lbn) const override { return blocks_.wants(lbn); }
  std::optional<std::uint64_t> consolidation_candidate() override { return blocks_.candidate(); }
  void register_block_mapping(std::uint64_t lbn, BlockNumber block) override { blocks_.add(lbn, block); }
  void register_laid_out_blocks() override {
    // A cached entry, dirty or clean, is the current mapping.
    blocks_.register_laid_out([this](Lpn lpn) { return cache_.peek(lpn); });
  }

  std::uint64_t cache_bytes_used() const override { return cache_.bytes_used() + blocks_.bytes_used(); }
  void set_capacity_bytes(std::uint64_t bytes) override {
    cache_.set_capacity_bytes(bytes > cbmt_bytes_ ? bytes - cbmt_bytes_ : 0);
  }
  void set_observer(MappingObserver* observer) override { observer_ = observer; }

 private:
  // Entries become dirty only here and clean only in merge_dirty(), a translation page at a
  // time, so a flag per page counts the dirty pages exactly.
  void mark_dirty(Lpn lpn) {
    const std::uint64_t tpn = layout_.tpn_of(lpn);
    if (!has_dirty_[tpn]) {
      has_dirty_[tpn] = true;
      ++dirty_pages_;
    }
  }

  bool cftl_;
  const FtlLayout& layout_;
  TranslationPages& pages_;
  FtlStats& stats_;
  EntryCache cache_;
  std::uint64_t cbmt_bytes_;  // the CBMT's share, out of whatever capacity the cache is given
  BlockMapping blocks_;
  MappingObserver* observer_ = nullptr;
  std::vector<std::uint32_t> buffer_;
  std::vector<bool> has_dirty_;  // by translation page
  std::vector<bool> host_dirty_;  // ... dirtied by a host write or trim, not only by relocations
  std::uint64_t dirty_pages_ = 0;
};

}  // namespace

std::uint32_t mapping_entry_bytes(format::MappingScheme scheme) {
  return scheme == format::MappingScheme::cftl ? 12 : 8;
}

std::unique_ptr<Mapper> make_entry_mapper(format::MappingScheme scheme, const FtlLayout& layout,
                                          const FtlOptions& options, TranslationPages& pages, FtlStats& stats,
                                          std::uint64_t capacity_bytes, std::uint64_t cbmt_bytes) {
  return std::make_unique<EntryMapper>(scheme == format::MappingScheme::cftl, layout, options, pages, stats,
                                       capacity_bytes, cbmt_bytes);
}

}  // namespace flashdir::ftl
