// The mapping scheme: how the FTL translates LPNs, given that the complete page map lives in
// translation pages on flash (reached through the GTD) and only part of it fits in RAM.
//
//   page   the whole map in RAM (the ideal lower bound); translation pages are written only
//          when a checkpoint needs them
//   dftl   an entry cache (CMT, LRU) with batch write-back of dirty entries
//   cftl   an entry cache with CFTL's consecutive field (CPMT, LFU), the CBMT for logical
//          blocks laid out whole in one physical block, and a hot/cold detector that proposes
//          logical blocks to convert to block mapping
//
// The rule every scheme keeps (recovery depends on it, doc/ftl.md): the content written for a
// translation page is the exact current mapping of all its LPNs: flash content, overlaid with
// every dirty cached entry of that page, overlaid with the update being applied. And set() and
// relocate() never write translation pages of their own accord: evictions wait for
// enforce_budget(), so a run of updates lands in RAM before any of them reaches flash.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "flashdir/ftl/options.h"
#include "flashdir/ftl/stats.h"
#include "flashdir/status.h"
#include "layout.h"

namespace flashdir::ftl {

// The translation-page I/O a scheme needs; the FTL core provides it.
class TranslationPages {
 public:
  virtual ~TranslationPages() = default;
  // The content of translation page `tpn` as on flash (all unmapped if never written).
  virtual Status read(std::uint64_t tpn, std::span<std::uint32_t> entries) = 0;
  // Writes `entries` as the new content of `tpn`.
  virtual Status write(std::uint64_t tpn, std::span<const std::uint32_t> entries) = 0;
  // While set, the reads and writes above are charged to garbage collection
  // (FtlStats::gc_translation_page_reads/writes): a scheme sets it around the write-back of a
  // translation page that only GC's relocations dirtied (doc/ftl.md, "Who pays for GC's
  // mapping updates"). I/O during a GC run is charged to GC whatever this says.
  virtual void charge_to_gc(bool gc) { (void)gc; }
};

// Sets TranslationPages::charge_to_gc for a scope.
class GcCharge {
 public:
  GcCharge(TranslationPages& pages, bool gc) : pages_(pages), gc_(gc) {
    if (gc_) pages_.charge_to_gc(true);
  }
  ~GcCharge() {
    if (gc_) pages_.charge_to_gc(false);
  }
  GcCharge(const GcCharge&) = delete;
  GcCharge& operator=(const GcCharge&) = delete;

 private:
  TranslationPages& pages_;
  bool gc_;
};

enum class Access {
  read,      // a host read
  write,     // a host write or trim: CFTL drops the block mapping of the LPN's logical block
  flush,     // a buffered host write reaching flash: a write, but it does not make RAM state recent
  internal,  // GC or consolidation looking a page up
};

struct Relocation {
  Lpn lpn;
  std::uint32_t to;  // new PPN
};

// What an entry cache reports to an adaptive RAM policy (APS's ghost caches and cost model).
class MappingObserver {
 public:
  virtual ~MappingObserver() = default;
  virtual void looked_up(Lpn lpn, Access access, bool hit) = 0;
  virtual void evicted(Lpn first, std::uint32_t length) = 0;
  virtual void wrote_back(std::uint64_t entries) = 0;  // entries carried by one translation page write
};

// Counts a mapping-cache lookup in `stats`, by kind.
void count_lookup(FtlStats& stats, Access access, bool hit);

class Mapper {
 public:
  virtual ~Mapper() = default;

  // The RAM this mapping may use (a RAM policy moving its split changes it); enforce_budget()
  // then evicts down to it. The `page` scheme's whole map is free (the ideal) and ignores it.
  virtual void set_capacity_bytes(std::uint64_t bytes) { (void)bytes; }
  virtual void set_observer(MappingObserver* observer) { (void)observer; }

  // The PPN of `lpn` (kUnmappedPpn if none); may read a translation page.
  virtual Result<std::uint32_t> lookup(Lpn lpn, Access access) = 0;
  // Records lpn -> ppn after a host write or trim (kUnmappedPpn); lookup(lpn, write) came first.
  virtual void set(Lpn lpn, std::uint32_t ppn) = 0;
  // GC or consolidation moved these pages. They are recorded in RAM like set(); during a GC
  // run the cache may exceed its budget by the run's moves until enforce_budget() ends it.
  virtual Status relocate(std::span<const Relocation> moves) = 0;
  // Evicts down to the RAM budget, writing dirty entries back (batched per translation page).
  virtual Status enforce_budget() = 0;
  // Writes back the dirty entries of one translation page (if any).
  virtual Status write_back(std::uint64_t tpn) = 0;
  // Writes back every dirty entry (before a checkpoint).
  virtual Status write_back_all() = 0;
  virtual std::uint64_t dirty_translation_pages() const = 0;
  // Overlays the dirty cached entries of `tpn` on `entries` and marks them clean: the caller is
  // about to write `entries` as that page (GC moving it).
  virtual void merge_dirty(std::uint64_t tpn, std::span<std::uint32_t> entries) = 0;

  // CFTL's hooks; the other schemes keep the defaults.
  // Host accesses, for the hot/cold detector.
  virtual void note_access(Lpn /*first*/, std::uint32_t /*count*/, Access /*access*/) {}
  // Whether `lbn` is read-hot and write-cold and not yet block-mapped.
  virtual bool wants_block_mapping(std::uint64_t /*lbn*/) const { return false; }
  // Some logical block that wants block mapping, for background consolidation.
  virtual std::optional<std::uint64_t> consolidation_candidate() { return std::nullopt; }
  // `lbn` now lives whole at pages [0, P) of `block`.
  virtual void register_block_mapping(std::uint64_t /*lbn*/, BlockNumber /*block*/) {}
  // After a host read's lookups: block-maps, for free, the logical blocks it made wanted that
  // the mapping held in RAM shows laid out whole; reads no flash (doc/ftl.md "CFTL").
  virtual void register_laid_out_blocks() {}

  virtual std::uint64_t cache_bytes_used() const = 0;
};

// What one cached mapping entry costs in device RAM under `scheme`: DFTL's LPN + PPN (8
// bytes); CFTL's adds the consecutive field and the LFU counter (12).
std::uint32_t mapping_entry_bytes(format::MappingScheme scheme);

// The `page` scheme; `map` (logical_pages entries) and `dirty` (translation pages that differ
// from flash) come from recovery, or are read from flash when omitted.
Result<std::unique_ptr<Mapper>> make_page_mapper(const FtlLayout& layout, TranslationPages& pages,
                                                 FtlStats& stats, std::vector<std::uint32_t> map,
                                                 std::vector<std::uint64_t> dirty_tpns);
Result<std::unique_ptr<Mapper>> load_page_mapper(const FtlLayout& layout, TranslationPages& pages,
                                                 FtlStats& stats);
// The `dftl` and `cftl` schemes, starting with empty caches of `capacity_bytes`, of which the
// CBMT (cftl) keeps `cbmt_bytes`.
std::unique_ptr<Mapper> make_entry_mapper(format::MappingScheme scheme, const FtlLayout& layout,
                                          const FtlOptions& options, TranslationPages& pages, FtlStats& stats,
                                          std::uint64_t capacity_bytes, std::uint64_t cbmt_bytes);

}  // namespace flashdir::ftl
