// TreeFTL (papers/treeftl.txt): the GTD is the root; cached translation pages (CTPs) hang off
// it, and the cached data pages (CDPs) of each translation page hang off its CTP. A CTP with its
// CDPs is a caching group. Structural invariant: a CDP's mapping is always cached (under the
// `page` scheme the whole map is in RAM anyway, and groups hold only CDPs).
//
// `stack` composes the tree with CFTL and the partitioned policies' buffer (doc/ram.md
// "stack"): a group's translation state is in CFTL's compact form (group_map.h): a miss caches
// the run around the LPN until the group shows its page is worth holding whole, GC's moves are
// recorded as runs without reading the page, and a whole page is charged by its runs when they
// cost less. Data pages leave in least-recently-used order across groups instead of LATTE's
// group by group.
//
// Eviction, lightweight LRU at group granularity (LATTE): groups are kept in last-access order
// (an intrusive list: the oldest at the head, O(1) per access). The victim group is the oldest;
// its CDPs go first, by increasing offset, the one accessed last kept for the end; a group left
// with no CDP that is again the oldest loses its CTP, written back if dirty. Reads of uncached
// data go to flash without caching; writes longer than half a block bypass RAM.
//
// GC's relocations (doc/ram.md, "GC's mapping updates"): a move into a cached translation page
// updates the CTP; with the relocation log on, a move into an uncached one waits in the log, 8 bytes an entry,
// without reading the page. The log is merged into the CTP when the page is next loaded, and
// when it outgrows its share of the budget the page with the most waiting entries is written
// back, one read-modify-write for all of them.
#include <absl/container/btree_map.h>
#include <absl/container/flat_hash_map.h>

#include <cassert>
#include <limits>
#include <list>
#include <set>
#include <utility>

#include "ftl/block_mapping.h"
#include "ftl/mapcache/entry_cache.h"
#include "group_map.h"
#include "ram_manager.h"
#include "ram_policies.h"

namespace flashdir::ram {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kLogEntryBytes = 8;  // a relocation waiting in the log: LPN + PPN
// The relocation log may hold at most 1/kLogShareDivisor of the budget, and entries of at most
// as many translation pages as the budget could cache (each is a dirty translation page the
// free-space target keeps room for: FtlCore::translation_blocks_pending). doc/ram.md.
constexpr std::uint64_t kLogShareDivisor = 8;
// stack: the misses in a group that cache a run each before the next takes the whole page.
constexpr std::uint32_t kRunsBeforeWholePage = 4;

struct Group {
  explicit Group(const GroupMapShape& shape) : map(shape) {}

  // Holds nothing again (the map keeps its storage for the next translation page).
  void reset() {
    tpn = 0;
    map.clear();
    dirty = host_dirty = false;
    runs_loaded = 0;
    cdps.clear();
    last_offset = older = newer = kNone;
    flushed_in_eviction = 0;
  }

  std::uint64_t tpn = 0;
  GroupMap map;              // what is cached of the translation page (the CTP)
  bool dirty = false;        // the map holds mappings the page on flash lacks
  bool host_dirty = false;   // ... set by a host write or trim, not only by GC's relocations
  std::uint32_t runs_loaded = 0;  // stack: misses that cached a run, not the page
  absl::btree_map<std::uint32_t, BufferedPage> cdps;  // by offset in the translation page
  std::uint32_t last_offset = kNone;                 // LATTE: the CDP accessed last
  std::uint32_t older = kNone;                       // LRU links (group indexes)
  std::uint32_t newer = kNone;
  std::uint64_t flushed_in_eviction = 0;             // the evict() call that last took one of its CDPs
};

GroupMapShape group_map_shape(const ftl::FtlLayout& layout, const FtlOptions& options) {
  GroupMapShape shape;
  shape.entries = layout.entries_per_translation_page;
  shape.page_bytes = layout.geometry.page_size_bytes;
  shape.entry_bytes = ftl::mapping_entry_bytes(options.mapping);
  shape.consecutive = options.mapping == format::MappingScheme::cftl;
  shape.compact = options.ram.policy == format::RamPolicy::stack;
  return shape;
}

class TreeRam final : public RamManager {
 public:
  TreeRam(const ftl::FtlLayout& layout, const FtlOptions& options, TranslationPages& pages, FtlStats& stats,
          std::unique_ptr<ftl::Mapper> whole_map)
      : layout_(layout),
        pages_(pages),
        stats_(stats),
        budget_(options.ram.budget_bytes),
        page_bytes_(layout.geometry.page_size_bytes),
        whole_map_(std::move(whole_map)),
        blocks_(options.mapping == format::MappingScheme::cftl, layout, options,
                options.ram.budget_bytes * options.cftl.cbmt_share_percent / 100, stats),
        shape_(group_map_shape(layout, options)),
        group_of_tpn_(layout.translation_pages, kNone),
        log_bytes_max_(std::max<std::uint64_t>(kLogEntryBytes, options.ram.budget_bytes / kLogShareDivisor)),
        log_pages_max_(std::max<std::uint64_t>(1, options.ram.budget_bytes / page_bytes_)),
        relocation_log_(options.ram.tree_relocation_log && !shape_.compact),
        lru_data_(options.ram.policy == format::RamPolicy::stack),
        page_buffer_(layout.entries_per_translation_page) {}

  // ---- Translation

  Result<std::uint32_t> lookup(Lpn lpn, Access access) override {
    if (auto ppn = blocks_.lookup(lpn, access)) return *ppn;  // a CBMT hit needs no CTP
    if (whole_map_) return whole_map_->lookup(lpn, access);
    const std::uint64_t tpn = layout_.tpn_of(lpn);
    if (access == Access::internal && group_of_tpn_[tpn] == kNone) {
      // GC asking after a page it moved: the log knows, no need to load the page.
      if (auto logged = log_find(tpn, offset_of(lpn))) return *logged;
    }
    const std::uint32_t g = group(tpn);
    // Host requests make their group recent; flushing its CDPs must not (LATTE evicts the CTP
    // of a group whose CDPs just left, if it is still the oldest), nor must GC.
    if (access == Access::read || access == Access::write) touch(g);
    const std::uint32_t offset = offset_of(lpn);
    const auto held = groups_[g].map.find(offset);
    if (access != Access::internal) ftl::count_lookup(stats_, access, held.has_value());
    if (held) return *held;
    FLASHDIR_TRY(hold(g, offset));
    return *groups_[g].map.find(offset);
  }

  void set(Lpn lpn, std::uint32_t ppn) override {
    blocks_.page_mapped(lpn);
    if (whole_map_) return whole_map_->set(lpn, ppn);
    const std::uint32_t g = group(layout_.tpn_of(lpn));
    assert((shape_.compact || groups_[g].map.whole()) && "set() follows a lookup that cached the translation page");
    record(g, offset_of(lpn), ppn);
    groups_[g].host_dirty = true;
  }

  Status relocate(std::span<const Relocation> moves) override {
    if (whole_map_) {
      for (const Relocation& m : moves) blocks_.page_mapped(m.lpn);
      return whole_map_->relocate(moves);
    }
    // A move into a cached translation page updates it (without making it recent); one into
    // an uncached page waits in the log (RamOptions::tree_relocation_log), so that the moves of
    // many GC runs into one page cost one read-modify-write, or without the log caches the page
    // now: a GC run's moves into it then cost one write-back. The compact form records the move
    // as a dirty run whatever the group holds, without reading the page (as the entry caches
    // do). evict() restores the budget after.
    for (const Relocation& m : moves) {
      blocks_.page_mapped(m.lpn);
      const std::uint64_t tpn = layout_.tpn_of(m.lpn);
      const std::uint32_t cached = group_of_tpn_[tpn];
      if (relocation_log_ && (cached == kNone || !groups_[cached].map.whole())) {
        log_add(tpn, offset_of(m.lpn), m.to);
        continue;
      }
      const std::uint32_t g = group(tpn);
      if (!shape_.compact && !groups_[g].map.whole()) FLASHDIR_TRY(load(g));
      record(g, offset_of(m.lpn), m.to);
    }
    return Status::ok();
  }

  Status write_back(std::uint64_t tpn) override {
    if (whole_map_) return whole_map_->write_back(tpn);
    if (log_.contains(tpn)) return write_back_log(tpn);
    const std::uint32_t g = group_of_tpn_[tpn];
    if (g == kNone || !groups_[g].dirty) return Status::ok();
    return write_group(groups_[g]);
  }

  Status write_back_all() override {
    if (whole_map_) return whole_map_->write_back_all();
    for (Group& g : groups_) {
      if (g.dirty) FLASHDIR_TRY(write_group(g));
    }
    while (!log_order_.empty()) FLASHDIR_TRY(write_back_log(log_order_.rbegin()->second));
    return Status::ok();
  }

  std::uint64_t dirty_translation_pages() const override {
    return whole_map_ ? whole_map_->dirty_translation_pages() : dirty_group_count_ + log_.size();
  }

  void merge_dirty(std::uint64_t tpn, std::span<std::uint32_t> entries) override {
    if (whole_map_) return whole_map_->merge_dirty(tpn, entries);
    log_take(tpn, entries);  // only an uncached page has logged moves
    const std::uint32_t g = group_of_tpn_[tpn];
    if (g == kNone) return;
    groups_[g].map.overlay(entries);
    mark_clean(groups_[g]);
  }

  void note_access(Lpn first, std::uint32_t count, Access access) override { blocks_.note_access(first, count, access); }
  bool wants_block_mapping(std::uint64_t lbn) const override { return blocks_.wants(lbn); }
  std::optional<std::uint64_t> consolidation_candidate() override { return blocks_.candidate(); }
  void register_block_mapping(std::uint64_t lbn, BlockNumber block) override { blocks_.add(lbn, block); }
  void register_laid_out_blocks() override {
    // What a group holds is the current mapping (runs set overlay the page on flash), and so is
    // what waits in the relocation log of a page no group holds whole.
    blocks_.register_laid_out([this](Lpn lpn) -> std::optional<std::uint32_t> {
      const std::uint64_t tpn = layout_.tpn_of(lpn);
      const std::uint32_t g = group_of_tpn_[tpn];
      if (g != kNone) {
        if (auto ppn = groups_[g].map.find(offset_of(lpn))) return ppn;
      }
      return log_find(tpn, offset_of(lpn));
    });
  }

  // ---- The write buffer

  bool buffers_write(std::uint32_t count) const override {
    return count <= layout_.geometry.pages_per_block / 2 && budget_ >= 2ULL * page_bytes_;
  }

  const BufferedPage* find(Lpn lpn) override {
    ++stats_.buffer_read_lookups;
    const std::uint32_t g = group_of_tpn_[layout_.tpn_of(lpn)];
    if (g == kNone) return nullptr;
    auto it = groups_[g].cdps.find(offset_of(lpn));
    if (it == groups_[g].cdps.end()) return nullptr;
    ++stats_.buffer_read_hits;
    note_cdp_used(lpn);
    groups_[g].last_offset = it->first;
    touch(g);
    return &it->second;
  }

  Result<std::optional<std::uint64_t>> put(BufferedPage page) override {
    ++stats_.buffer_write_lookups;
    blocks_.page_mapped(page.lpn);
    const std::uint32_t g = group(layout_.tpn_of(page.lpn));
    const std::uint32_t offset = offset_of(page.lpn);
    // The structural invariant: no CDP without its mapping.
    if (!whole_map_ && !groups_[g].map.find(offset)) FLASHDIR_TRY(hold(g, offset));
    touch(g);
    groups_[g].last_offset = offset;
    note_cdp_used(page.lpn);
    auto [it, inserted] = groups_[g].cdps.try_emplace(offset);
    std::optional<std::uint64_t> replaced;
    if (!inserted) {
      ++stats_.buffer_write_hits;
      replaced = it->second.pending_since;
      page.pending_since = *replaced;
    } else {
      ++cdp_count_;
    }
    it->second = std::move(page);
    return replaced;
  }

  std::optional<std::uint64_t> drop(Lpn lpn) override {
    const std::uint32_t g = group_of_tpn_[layout_.tpn_of(lpn)];
    if (g == kNone) return std::nullopt;
    auto it = groups_[g].cdps.find(offset_of(lpn));
    if (it == groups_[g].cdps.end()) return std::nullopt;
    const std::uint64_t pending = it->second.pending_since;
    forget_cdp(lpn);
    groups_[g].cdps.erase(it);
    --cdp_count_;
    return pending;
  }

  // ---- The budget

  Status evict(std::vector<BufferedPage>& victims) override {
    victims.clear();
    const std::uint64_t eviction = ++evictions_;  // marks the groups whose CDPs are on their way to flash
    // The log within its share: the pages with the most waiting moves are written first.
    while (!log_order_.empty() && (log_entries_ * kLogEntryBytes > log_bytes_max_ || log_.size() > log_pages_max_)) {
      FLASHDIR_TRY(write_back_log(log_order_.rbegin()->second));
    }
    while (usage().total() > budget_ && oldest_ != kNone) {
      const std::uint32_t g = oldest_;
      Group& group = groups_[g];
      if (!group.cdps.empty()) {
        if (lru_data_) {
          // stack: the least recently used CDP of any group.
          const Lpn lpn(cdp_order_.front());
          Group& owner = groups_[group_of_tpn_[layout_.tpn_of(lpn)]];
          take_cdp(owner, owner.cdps.find(offset_of(lpn)), eviction, victims);
        } else {
          // Smallest offset first; the one accessed last only when it is the only one left.
          auto it = group.cdps.begin();
          if (it->first == group.last_offset && group.cdps.size() > 1) ++it;
          take_cdp(group, it, eviction, victims);
        }
        continue;
      }
      // Its CTP must outlive the mapping updates of its CDPs being flushed: next call.
      if (group.flushed_in_eviction == eviction) break;
      if (!group.map.empty()) {
        if (group.dirty) FLASHDIR_TRY(write_group(group));
        ++stats_.evicted_translation_pages;
      }
      release(g);
    }
    // Nothing else left to give (a budget below the log's share): the log goes too.
    while (victims.empty() && oldest_ == kNone && usage().total() > budget_ && !log_order_.empty()) {
      FLASHDIR_TRY(write_back_log(log_order_.rbegin()->second));
    }
    return Status::ok();
  }

  std::vector<BufferedPage> drain() override {
    std::vector<BufferedPage> pages;
    for (std::uint64_t tpn = 0; tpn < group_of_tpn_.size(); ++tpn) {
      const std::uint32_t g = group_of_tpn_[tpn];
      if (g == kNone) continue;
      for (auto& [offset, page] : groups_[g].cdps) pages.push_back(std::move(page));
      cdp_count_ -= groups_[g].cdps.size();
      groups_[g].cdps.clear();
    }
    cdp_order_.clear();
    cdp_position_.clear();
    return pages;
  }

  RamUsage usage() const override {
    RamUsage u;
    u.budget_bytes = budget_;
    u.mapping_bytes = group_bytes_ + blocks_.bytes_used() + log_entries_ * kLogEntryBytes;
    u.buffer_bytes = cdp_count_ * page_bytes_;
    u.mapping_partition_bytes = u.mapping_bytes;  // the split is whatever the tree holds
    return u;
  }

 private:
  std::uint32_t offset_of(Lpn lpn) const {
    return static_cast<std::uint32_t>(lpn.value % layout_.entries_per_translation_page);
  }

  // The group of `tpn`, created (as the oldest) if absent.
  std::uint32_t group(std::uint64_t tpn) {
    std::uint32_t& g = group_of_tpn_[tpn];
    if (g != kNone) return g;
    if (free_.empty()) {
      g = static_cast<std::uint32_t>(groups_.size());
      groups_.emplace_back(shape_);
    } else {
      g = free_.back();
      free_.pop_back();
    }
    groups_[g].tpn = tpn;
    link_oldest(g);
    return g;
  }

  // Reads the translation page of group `g` and caches it whole, under what the group held.
  Status load(std::uint32_t g) {
    Group& group = groups_[g];
    FLASHDIR_TRY(pages_.read(group.tpn, page_buffer_));
    const bool logged = log_take(group.tpn, page_buffer_);  // GC's moves that waited for it
    const std::uint64_t before = group.map.bytes();
    group.map.load_whole(page_buffer_);
    group_bytes_ += group.map.bytes() - before;
    if (logged) mark_dirty(group);
    // The whole page is the exact current mapping of its LPNs, so its layouts are facts.
    blocks_.register_aligned(layout_.first_lpn_of_tpn(group.tpn).value, group.map.entries(),
                             [](std::uint64_t) { return false; });
    return Status::ok();
  }

  // Caches the mapping of `offset` in group `g`, which lacks it: the run around it (stack),
  // or the whole page (tree; stack once the group has shown that its page is worth it).
  Status hold(std::uint32_t g, std::uint32_t offset) {
    Group& group = groups_[g];
    if (!shape_.compact || takes_whole(group)) return load(g);
    FLASHDIR_TRY(pages_.read(group.tpn, page_buffer_));
    const std::uint64_t before = group.map.bytes();
    group.map.load_run(page_buffer_, offset);
    group_bytes_ += group.map.bytes() - before;
    ++group.runs_loaded;
    return Status::ok();
  }

  // stack: a group takes its whole page at its fifth miss, or sooner once its runs cost half
  // a page (doc/ram.md "stack").
  bool takes_whole(const Group& group) const {
    return group.runs_loaded >= kRunsBeforeWholePage ||
           group.map.bytes() + shape_.entry_bytes >= shape_.page_bytes / 2;
  }

  // Records offset -> ppn in group `g`'s map, dirty.
  void record(std::uint32_t g, std::uint32_t offset, std::uint32_t ppn) {
    Group& group = groups_[g];
    const std::uint64_t before = group.map.bytes();
    group.map.set(offset, ppn);
    group_bytes_ += group.map.bytes() - before;
    mark_dirty(group);
  }

  // Writes what the group holds of its translation page back, after reading the page if the
  // group holds only runs of it; charged to GC if only relocations dirtied it.
  Status write_group(Group& group) {
    const ftl::GcCharge charge(pages_, !group.host_dirty);
    if (!group.map.whole()) FLASHDIR_TRY(pages_.read(group.tpn, page_buffer_));
    group.map.overlay(page_buffer_);
    FLASHDIR_TRY(pages_.write(group.tpn, page_buffer_));
    mark_clean(group);
    return Status::ok();
  }

  // ---- The relocation log: moves into uncached translation pages, by page.
  std::optional<std::uint32_t> log_find(std::uint64_t tpn, std::uint32_t offset) const {
    auto page = log_.find(tpn);
    if (page == log_.end()) return std::nullopt;
    auto entry = page->second.find(offset);
    if (entry == page->second.end()) return std::nullopt;
    return entry->second;
  }
  void log_add(std::uint64_t tpn, std::uint32_t offset, std::uint32_t ppn) {
    auto& page = log_[tpn];
    const std::uint64_t before = page.size();
    page[offset] = ppn;
    if (page.size() == before) return;  // a later move of the same LPN replaces the earlier
    if (before != 0) log_order_.erase({before, tpn});
    log_order_.insert({page.size(), tpn});
    ++log_entries_;
  }
  // Overlays the logged moves of `tpn` on `entries` and forgets them; whether there were any.
  bool log_take(std::uint64_t tpn, std::span<std::uint32_t> entries) {
    auto page = log_.find(tpn);
    if (page == log_.end()) return false;
    for (const auto& [offset, ppn] : page->second) entries[offset] = ppn;
    log_order_.erase({page->second.size(), tpn});
    log_entries_ -= page->second.size();
    log_.erase(page);
    return true;
  }
  // One read-modify-write of `tpn` for all its logged moves: GC's I/O.
  Status write_back_log(std::uint64_t tpn) {
    const ftl::GcCharge charge(pages_, true);
    log_buffer_.resize(layout_.entries_per_translation_page);
    FLASHDIR_TRY(pages_.read(tpn, log_buffer_));
    log_take(tpn, log_buffer_);
    return pages_.write(tpn, log_buffer_);
  }

  // Hands a CDP to the FTL to program; its group's mapping must stay for this eviction.
  void take_cdp(Group& group, absl::btree_map<std::uint32_t, BufferedPage>::iterator cdp, std::uint64_t eviction,
                std::vector<BufferedPage>& victims) {
    forget_cdp(cdp->second.lpn);
    victims.push_back(std::move(cdp->second));
    group.cdps.erase(cdp);
    --cdp_count_;
    ++stats_.evicted_data_pages;
    group.flushed_in_eviction = eviction;
  }

  // ---- stack: the CDPs of all groups in last-use order.
  void note_cdp_used(Lpn lpn) {
    if (!lru_data_) return;
    auto [it, inserted] = cdp_position_.try_emplace(lpn.value);
    if (!inserted) cdp_order_.erase(it->second);
    it->second = cdp_order_.insert(cdp_order_.end(), lpn.value);
  }
  void forget_cdp(Lpn lpn) {
    auto it = cdp_position_.find(lpn.value);
    if (it == cdp_position_.end()) return;
    cdp_order_.erase(it->second);
    cdp_position_.erase(it);
  }

  void mark_dirty(Group& group) {
    if (!group.dirty) ++dirty_group_count_;
    group.dirty = true;
  }
  void mark_clean(Group& group) {
    if (group.dirty) --dirty_group_count_;
    group.dirty = false;
    group.host_dirty = false;
    group.map.mark_clean();
  }

  void release(std::uint32_t g) {
    Group& group = groups_[g];
    assert(group.cdps.empty() && !group.dirty);
    group_bytes_ -= group.map.bytes();
    unlink(g);
    group_of_tpn_[group.tpn] = kNone;
    group.reset();
    free_.push_back(g);
  }

  // ---- The LRU list of groups: oldest_ ... newest_.
  void unlink(std::uint32_t g) {
    Group& group = groups_[g];
    (group.older == kNone ? oldest_ : groups_[group.older].newer) = group.newer;
    (group.newer == kNone ? newest_ : groups_[group.newer].older) = group.older;
    group.older = group.newer = kNone;
  }
  void link_oldest(std::uint32_t g) {
    groups_[g].newer = oldest_;
    groups_[g].older = kNone;
    (oldest_ == kNone ? newest_ : groups_[oldest_].older) = g;
    oldest_ = g;
  }
  void touch(std::uint32_t g) {
    if (newest_ == g) return;
    unlink(g);
    groups_[g].older = newest_;
    groups_[g].newer = kNone;
    (newest_ == kNone ? oldest_ : groups_[newest_].newer) = g;
    newest_ = g;
  }

  const ftl::FtlLayout& layout_;
  TranslationPages& pages_;
  FtlStats& stats_;
  std::uint64_t budget_;
  std::uint64_t page_bytes_;
  std::unique_ptr<ftl::Mapper> whole_map_;  // the `page` scheme: the map is in RAM, free
  ftl::BlockMapping blocks_;
  const GroupMapShape shape_;  // the groups' maps point at it
  std::vector<Group> groups_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> group_of_tpn_;
  std::uint32_t oldest_ = kNone;
  std::uint32_t newest_ = kNone;
  std::uint64_t group_bytes_ = 0;  // what the groups' maps cost
  std::uint64_t cdp_count_ = 0;
  std::uint64_t dirty_group_count_ = 0;
  std::uint64_t evictions_ = 0;  // evict() calls
  // The relocation log: translation page -> (offset -> new PPN), and (entries, page) to find
  // the page with the most.
  absl::flat_hash_map<std::uint64_t, absl::flat_hash_map<std::uint32_t, std::uint32_t>> log_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> log_order_;
  std::uint64_t log_entries_ = 0;
  std::uint64_t log_bytes_max_;
  std::uint64_t log_pages_max_;
  const bool relocation_log_;  // RamOptions::tree_relocation_log (tree only); off: the log stays empty
  const bool lru_data_;        // stack: CDPs leave least recently used first, not by group (LATTE)
  std::vector<std::uint32_t> log_buffer_;
  std::vector<std::uint32_t> page_buffer_;  // a translation page being loaded or written back
  std::list<std::uint64_t> cdp_order_;  // stack: LPNs of the CDPs, least recently used first
  absl::flat_hash_map<std::uint64_t, std::list<std::uint64_t>::iterator> cdp_position_;
};

}  // namespace

std::unique_ptr<RamManager> make_tree_ram(const ftl::FtlLayout& layout, const FtlOptions& options,
                                          TranslationPages& pages, FtlStats& stats,
                                          std::unique_ptr<ftl::Mapper> whole_map) {
  return std::make_unique<TreeRam>(layout, options, pages, stats, std::move(whole_map));
}

}  // namespace flashdir::ram
