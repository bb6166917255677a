// The partitioned policies: a mapping cache and an LRU write buffer with a fixed (static:P,
// the JTL-like baseline) or adaptive (APS) split of the budget. APS keeps two ghost caches
// and, every interval, moves RAM towards the partition whose ghost earned more per byte
// (aps_model.h) by the step its controller sets; both start at half the budget.
#include <algorithm>
#include <cassert>
#include <memory>
#include <optional>

#include "aps_model.h"
#include "ghost_bitmap.h"
#include "ghost_buffer.h"
#include "lru_buffer.h"
#include "ram_manager.h"
#include "ram_policies.h"

namespace flashdir::ram {
namespace {

constexpr std::uint64_t kGhostIdBytes = 8;  // an LPN in the ghost buffer
constexpr std::uint64_t kGhostWindowDivisor = 4;  // each ghost represents at most usable / 4 beyond its partition

// What APS measures between repartitions.
struct ApsInterval {
  ApsGhostHits ghost_hits;
  std::uint64_t mapping_reads = 0, mapping_read_misses = 0;
  std::uint64_t mapping_writes = 0, mapping_write_misses = 0;
};

class PartitionedRam final : public RamManager, private ftl::MappingObserver {
 public:
  PartitionedRam(const ftl::FtlLayout& layout, const FtlOptions& options, const LatencyProfile& latency,
                 FtlStats& stats, std::unique_ptr<ftl::Mapper> mapping, bool mapping_is_free)
      : layout_(layout),
        options_(options.ram),
        stats_(stats),
        latency_(latency),
        page_bytes_(layout.geometry.page_size_bytes),
        mapping_(std::move(mapping)),
        mapping_is_free_(mapping_is_free),
        adaptive_(options.ram.policy == format::RamPolicy::aps && !mapping_is_free),
        entry_bytes_(ftl::mapping_entry_bytes(options.mapping)),
        ghost_mapping_(adaptive_ ? options.ram.budget_bytes / entry_bytes_ : 64, 0x9E3779B9) {
    const std::uint64_t budget = options.ram.budget_bytes;
    ghost_reserve_ = adaptive_ ? ghost_mapping_.bytes() + budget / page_bytes_ * kGhostIdBytes : 0;
    const std::uint64_t usable = budget > ghost_reserve_ ? budget - ghost_reserve_ : 0;
    // The page scheme's map is free, but its share is not given to the buffer: static:100
    // then means "no write buffer" for every scheme alike.
    const std::uint64_t mapping_share =
        options.ram.policy == format::RamPolicy::aps ? 50 : options.ram.static_mapping_percent;
    ghost_window_bytes_ = usable / kGhostWindowDivisor;
    set_split(usable * mapping_share / 100, usable);
    if (adaptive_) {
      mapping_->set_observer(this);
      // The smallest step: the tune unit, or 1/256 of the partitioned RAM (at least an entry).
      const std::uint64_t min_step =
          options.ram.aps_tune_unit_bytes != 0 ? options.ram.aps_tune_unit_bytes : std::max<std::uint64_t>(usable / 256, entry_bytes_);
      controller_ = ApsStepController(min_step, usable / 32, usable / 8);
    }
  }

  // ---- Translation: the mapping scheme's.
  Result<std::uint32_t> lookup(Lpn lpn, Access access) override { return mapping_->lookup(lpn, access); }
  void set(Lpn lpn, std::uint32_t ppn) override { mapping_->set(lpn, ppn); }
  Status relocate(std::span<const Relocation> moves) override { return mapping_->relocate(moves); }
  Status write_back(std::uint64_t tpn) override { return mapping_->write_back(tpn); }
  Status write_back_all() override { return mapping_->write_back_all(); }
  std::uint64_t dirty_translation_pages() const override { return mapping_->dirty_translation_pages(); }
  void merge_dirty(std::uint64_t tpn, std::span<std::uint32_t> entries) override { mapping_->merge_dirty(tpn, entries); }
  void note_access(Lpn first, std::uint32_t count, Access access) override { mapping_->note_access(first, count, access); }
  bool wants_block_mapping(std::uint64_t lbn) const override { return mapping_->wants_block_mapping(lbn); }
  std::optional<std::uint64_t> consolidation_candidate() override { return mapping_->consolidation_candidate(); }
  void register_block_mapping(std::uint64_t lbn, BlockNumber block) override { mapping_->register_block_mapping(lbn, block); }
  void register_laid_out_blocks() override { mapping_->register_laid_out_blocks(); }

  // ---- The write buffer.
  bool buffers_write(std::uint32_t count) const override {
    return count <= layout_.geometry.pages_per_block / 2 && buffer_limit_ >= page_bytes_;
  }

  const BufferedPage* find(Lpn lpn) override {
    ++stats_.buffer_read_lookups;
    if (BufferedPage* page = buffer_.find(lpn)) {
      ++stats_.buffer_read_hits;
      return page;
    }
    if (adaptive_ && buffer_full() && ghost_buffer_.contains(lpn)) ++interval_.ghost_hits.buffer_reads;
    return nullptr;
  }

  Result<std::optional<std::uint64_t>> put(BufferedPage page) override {
    ++stats_.buffer_write_lookups;
    const Lpn lpn = page.lpn;
    auto replaced = buffer_.put(std::move(page));
    if (replaced) {
      ++stats_.buffer_write_hits;
    } else if (adaptive_ && ghost_buffer_.contains(lpn)) {
      if (buffer_full()) ++interval_.ghost_hits.buffer_writes;
      ghost_buffer_.erase(lpn);  // it is in the real buffer again
    }
    return replaced;
  }

  std::optional<std::uint64_t> drop(Lpn lpn) override { return buffer_.drop(lpn); }

  // ---- The budget.
  Status evict(std::vector<BufferedPage>& victims) override {
    victims.clear();
    FLASHDIR_TRY(mapping_->enforce_budget());
    while (buffer_.pages() * page_bytes_ > buffer_limit_) {
      auto page = buffer_.pop_lru();
      if (adaptive_) ghost_buffer_.insert(page->lpn);
      buffer_evicted_since_growth_ = true;
      ++stats_.evicted_data_pages;
      victims.push_back(std::move(*page));
    }
    return Status::ok();
  }

  std::vector<BufferedPage> drain() override { return buffer_.drain(); }

  RamUsage usage() const override {
    RamUsage u;
    u.budget_bytes = options_.budget_bytes;
    u.mapping_bytes = mapping_is_free_ ? 0 : mapping_->cache_bytes_used();
    u.buffer_bytes = buffer_.pages() * page_bytes_;
    u.ghost_bytes = ghost_reserve_;
    u.mapping_partition_bytes = mapping_limit_;
    return u;
  }

  void end_request() override {
    if (!adaptive_ || ++requests_ % std::max<std::uint64_t>(options_.aps_interval_requests, 1) != 0) return;
    repartition();
  }

  void note_gc(bool translation_block, std::uint64_t chip_ns) override {
    (translation_block ? translation_gc_ : data_gc_).add(static_cast<double>(chip_ns));
  }

 private:
  struct Average {
    double sum = 0;
    std::uint64_t count = 0;
    void add(double x) {
      sum += x;
      ++count;
    }
    double value(double otherwise = 0) const { return count == 0 ? otherwise : sum / static_cast<double>(count); }
  };

  // MappingObserver: the entry cache's misses, evictions and write-backs.
  void looked_up(Lpn lpn, Access access, bool hit) override {
    if (access == Access::internal) return;
    const bool read = access == Access::read;  // writes and flushes alike
    ++(read ? interval_.mapping_reads : interval_.mapping_writes);
    if (hit) return;
    ++(read ? interval_.mapping_read_misses : interval_.mapping_write_misses);
    if (mapping_full() && ghost_mapping_.contains(lpn))
      ++(read ? interval_.ghost_hits.mapping_reads : interval_.ghost_hits.mapping_writes);
  }

  // A ghost hit counts only once its partition is full again, i.e. has evicted since it last
  // grew: one with room left (still warming up) would have taken the page or entry anyway, so
  // the hit says nothing about more room, and counting it made the split overshoot (doc/ram.md
  // "The step"). Eviction, not bytes used, tells "full": CFTL keeps part of its share for the CBMT.
  bool buffer_full() const { return buffer_evicted_since_growth_; }
  bool mapping_full() const { return mapping_evicted_since_growth_; }
  void evicted(Lpn first, std::uint32_t length) override {
    mapping_evicted_since_growth_ = true;
    for (std::uint32_t i = 0; i < length; ++i) ghost_mapping_.insert(first + i);
  }
  void wrote_back(std::uint64_t entries) override { batch_.add(static_cast<double>(entries)); }

  // Mapping gets `mapping_bytes` of `usable`; each ghost represents what its partition lacks,
  // up to the same window beyond it (doc/ram.md "The step": the paper's ghosts, as large as
  // all a partition lacks, make the larger partition's ghost the smaller one and its hits the
  // dearer per byte, which held the split at either end).
  void set_split(std::uint64_t mapping_bytes, std::uint64_t usable) {
    usable_ = usable;
    const std::uint64_t mapping_before = mapping_limit_, buffer_before = buffer_limit_;
    mapping_limit_ = std::min(mapping_bytes, usable);
    buffer_limit_ = usable - mapping_limit_;
    if (mapping_limit_ > mapping_before) mapping_evicted_since_growth_ = false;
    if (buffer_limit_ > buffer_before) buffer_evicted_since_growth_ = false;
    mapping_->set_capacity_bytes(mapping_limit_);
    if (adaptive_) {
      const auto lacks = [&](std::uint64_t has) {
        return std::min(options_.budget_bytes - std::min(options_.budget_bytes, has), ghost_window_bytes_);
      };
      ghost_mapping_.set_capacity(lacks(mapping_limit_) / entry_bytes_);
      ghost_buffer_.set_capacity(lacks(buffer_limit_) / page_bytes_);
    }
  }

  void repartition() {
    ApsCosts costs;
    costs.read_ns = latency_.read_us * 1000.0;
    costs.program_ns = latency_.program_us * 1000.0;
    const double P = layout_.geometry.pages_per_block;
    costs.translation_gc_ns_per_page = translation_gc_.value() / P;
    costs.data_gc_ns_per_page = data_gc_.value() / P;
    costs.batch_factor = batch_.value(1);
    costs.read_miss_ratio = FtlStats::ratio(interval_.mapping_read_misses, interval_.mapping_reads);
    costs.write_miss_ratio = FtlStats::ratio(interval_.mapping_write_misses, interval_.mapping_writes);
    const ApsDecision d = aps_decide(interval_.ghost_hits, costs, ghost_buffer_.size() * page_bytes_,
                                     ghost_mapping_.size() * entry_bytes_);
    const ApsStepController::Step step = controller_.next(d, interval_.ghost_hits.total());
    if (!step.decided) return;  // too few ghost hits to tell: keep counting into this interval
    // Keep at least a page for data and an entry for mapping.
    const auto lowest = static_cast<std::int64_t>(std::min<std::uint64_t>(entry_bytes_, usable_));
    const auto highest = static_cast<std::int64_t>(usable_ > page_bytes_ ? usable_ - page_bytes_ : lowest);
    const std::int64_t target = std::clamp(static_cast<std::int64_t>(mapping_limit_) + step.to_mapping_bytes, lowest,
                                           std::max(lowest, highest));
    if (static_cast<std::uint64_t>(target) != mapping_limit_) ++stats_.aps_repartitions;
    set_split(static_cast<std::uint64_t>(target), usable_);
    interval_ = ApsInterval{};
  }

  const ftl::FtlLayout& layout_;
  RamOptions options_;
  FtlStats& stats_;
  LatencyProfile latency_;
  std::uint64_t page_bytes_;
  std::unique_ptr<ftl::Mapper> mapping_;
  bool mapping_is_free_;
  bool adaptive_;
  std::uint32_t entry_bytes_;
  LruBuffer buffer_;
  std::uint64_t usable_ = 0;
  std::uint64_t mapping_limit_ = 0;
  std::uint64_t buffer_limit_ = 0;
  std::uint64_t ghost_reserve_ = 0;
  std::uint64_t ghost_window_bytes_ = 0;  // the most each ghost represents
  bool mapping_evicted_since_growth_ = false;
  bool buffer_evicted_since_growth_ = false;
  GhostBuffer ghost_buffer_;
  GhostBitmap ghost_mapping_;
  ApsInterval interval_;
  ApsStepController controller_{1, 1, 1};  // set in the constructor under aps
  Average translation_gc_, data_gc_, batch_;
  std::uint64_t requests_ = 0;
};

}  // namespace

std::unique_ptr<RamManager> make_partitioned_ram(const ftl::FtlLayout& layout, const FtlOptions& options,
                                                 const LatencyProfile& latency, FtlStats& stats,
                                                 std::unique_ptr<ftl::Mapper> mapping, bool mapping_is_free) {
  return std::make_unique<PartitionedRam>(layout, options, latency, stats, std::move(mapping), mapping_is_free);
}

}  // namespace flashdir::ram
