// The `page` scheme: the whole page map in RAM.
#include <vector>

#include "mapcache/entry_cache.h"
#include "mapper.h"

namespace flashdir::ftl {
namespace {

class PageMapper final : public Mapper {
 public:
  PageMapper(const FtlLayout& layout, TranslationPages& pages, FtlStats& stats, std::vector<std::uint32_t> map)
      : layout_(layout),
        pages_(pages),
        stats_(stats),
        map_(std::move(map)),
        dirty_(layout.translation_pages, false),
        host_dirty_(layout.translation_pages, false) {}

  void mark_dirty(std::uint64_t tpn) {
    if (!dirty_[tpn]) ++dirty_count_;
    dirty_[tpn] = true;
  }

  Result<std::uint32_t> lookup(Lpn lpn, Access access) override {
    count_lookup(stats_, access, true);
    return map_[lpn.value];
  }
  void set(Lpn lpn, std::uint32_t ppn) override {
    map_[lpn.value] = ppn;
    mark_dirty(layout_.tpn_of(lpn));
    host_dirty_[layout_.tpn_of(lpn)] = true;
  }
  Status relocate(std::span<const Relocation> moves) override {
    for (const Relocation& m : moves) {
      map_[m.lpn.value] = m.to;
      mark_dirty(layout_.tpn_of(m.lpn));
    }
    return Status::ok();
  }
  Status enforce_budget() override { return Status::ok(); }
  Status write_back(std::uint64_t tpn) override {
    if (!dirty_[tpn]) return Status::ok();
    const GcCharge charge(pages_, !host_dirty_[tpn]);  // only relocations dirtied it: GC's I/O
    std::vector<std::uint32_t> entries(layout_.entries_per_translation_page);
    merge_dirty(tpn, entries);
    return pages_.write(tpn, entries);
  }
  Status write_back_all() override {
    for (std::uint64_t tpn = 0; tpn < dirty_.size(); ++tpn) FLASHDIR_TRY(write_back(tpn));
    return Status::ok();
  }
  std::uint64_t dirty_translation_pages() const override { return dirty_count_; }
  void merge_dirty(std::uint64_t tpn, std::span<std::uint32_t> entries) override {
    // RAM holds the whole truth: the page is simply the map's slice (unmapped past the end).
    const std::uint64_t first = layout_.first_lpn_of_tpn(tpn).value;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      entries[i] = first + i < map_.size() ? map_[first + i] : kUnmappedPpn;
    }
    if (dirty_[tpn]) --dirty_count_;
    dirty_[tpn] = false;
    host_dirty_[tpn] = false;
  }
  std::uint64_t cache_bytes_used() const override { return map_.size() * sizeof(std::uint32_t); }

 private:
  const FtlLayout& layout_;
  TranslationPages& pages_;
  FtlStats& stats_;
  std::vector<std::uint32_t> map_;
  std::vector<bool> dirty_;
  std::vector<bool> host_dirty_;  // dirtied by a host write or trim, not only by relocations
  std::uint64_t dirty_count_ = 0;
};

}  // namespace

void count_lookup(FtlStats& stats, Access access, bool hit) {
  ++stats.mapping_lookups;
  stats.mapping_hits += hit ? 1 : 0;
  if (access == Access::read) {
    ++stats.mapping_read_lookups;
    stats.mapping_read_hits += hit ? 1 : 0;
  } else if (access == Access::write || access == Access::flush) {
    ++stats.mapping_write_lookups;
    stats.mapping_write_hits += hit ? 1 : 0;
  }
}

Result<std::unique_ptr<Mapper>> make_page_mapper(const FtlLayout& layout, TranslationPages& pages, FtlStats& stats,
                                                 std::vector<std::uint32_t> map, std::vector<std::uint64_t> dirty_tpns) {
  auto mapper = std::make_unique<PageMapper>(layout, pages, stats, std::move(map));
  for (std::uint64_t tpn : dirty_tpns) mapper->mark_dirty(tpn);
  return std::unique_ptr<Mapper>(std::move(mapper));
}

Result<std::unique_ptr<Mapper>> load_page_mapper(const FtlLayout& layout, TranslationPages& pages, FtlStats& stats) {
  std::vector<std::uint32_t> map(layout.logical_pages, kUnmappedPpn);
  std::vector<std::uint32_t> entries(layout.entries_per_translation_page);
  for (std::uint64_t tpn = 0; tpn < layout.translation_pages; ++tpn) {
    FLASHDIR_TRY(pages.read(tpn, entries));
    const std::uint64_t first = layout.first_lpn_of_tpn(tpn).value;
    for (std::size_t i = 0; i < entries.size() && first + i < map.size(); ++i) map[first + i] = entries[i];
  }
  return make_page_mapper(layout, pages, stats, std::move(map), {});
}

}  // namespace flashdir::ftl
