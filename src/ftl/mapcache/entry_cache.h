// An entry-level cache of the page mapping (LPN -> PPN), the cached half of DFTL's CMT and of
// CFTL's CPMT. The complete mapping lives in translation pages on flash; the FTL loads entries
// on a miss, records new mappings here (dirty), and on eviction writes a dirty entry back
// together with every other dirty entry of the same translation page ("batch update").
//
// With `consecutive` (CFTL, papers/cftl.txt section 3.4) an entry covers a run: (lpn, ppn, n)
// maps lpn+i to ppn+i for every i in [0, n). A lookup hits any LPN inside a run. A new
// mapping for an LPN inside a run splits the run into up to three entries (Algorithm 2, with
// the range read as [LPN, LPN+n): the paper's test excludes both ends, an error noted in
// DESIGN.md). Beyond the paper, a new mapping that continues the dirty run ending right
// before it extends that run, so a sequential write leaves one entry, not one per page. A run
// never crosses a translation page. Without `consecutive` (DFTL) every entry has n = 1.
//
// Budget: every entry costs `entry_bytes` whatever its run length; over_budget() says when
// the FTL must evict. Eviction order is LFU with dynamic aging (CFTL; see eviction_order.h)
// or LRU (DFTL); among equal frequencies LFU takes the least recently used. When a write
// splits a run, the parts that stay keep the run's frequency and recency, and the written page
// starts as a new entry.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "flashdir/types.h"

namespace flashdir::ftl {

// A mapping entry's PPN as stored in translation pages; kUnmappedPpn marks an LPN with no
// data (never written, or trimmed), kLostPpn one whose data was lost (its page failed
// verification on every read, or vanished from the chip): reading it is a corruption error
// until it is written or trimmed (doc/ftl.md, "Lost pages"). No page number reaches either
// (FtlLayout refuses chips that large).
inline constexpr std::uint32_t kUnmappedPpn = 0xFFFFFFFFu;
inline constexpr std::uint32_t kLostPpn = 0xFFFFFFFEu;
// Whether a mapping entry names a physical page rather than one of the two marks.
constexpr bool is_physical(std::uint32_t ppn) { return ppn < kLostPpn; }
// The entry `offset` LPNs into a run that starts with `ppn`: pages count up, marks repeat.
constexpr std::uint32_t run_entry(std::uint32_t ppn, std::uint32_t offset) {
  return is_physical(ppn) ? ppn + offset : ppn;
}

enum class EntryEviction { lru, lfu };

struct EntryCacheOptions {
  std::uint64_t capacity_bytes = 0;
  std::uint32_t entry_bytes = 8;  // DFTL: LPN + PPN; CFTL: + consecutive field and counter
  bool consecutive = false;
  EntryEviction eviction = EntryEviction::lru;
  std::uint32_t translation_page_entries = 0;  // LPNs per translation page; required with `consecutive`
};

struct CachedRun {
  Lpn lpn;
  std::uint32_t ppn = kUnmappedPpn;  // of lpn; lpn+i maps to run_entry(ppn, i) (a mark: all alike)
  std::uint32_t length = 1;
  bool dirty = false;

  bool operator==(const CachedRun&) const = default;
};

class EntryCache {
 public:
  explicit EntryCache(const EntryCacheOptions& options);
  ~EntryCache();
  EntryCache(const EntryCache&) = delete;
  EntryCache& operator=(const EntryCache&) = delete;

  // The PPN of `lpn` if cached (kUnmappedPpn if cached as unmapped); counts an access.
  std::optional<std::uint32_t> lookup(Lpn lpn);
  // Like lookup, without counting an access.
  std::optional<std::uint32_t> peek(Lpn lpn) const;

  // Caches a clean run read from a translation page: lpn+i -> ppn+i for i in [0, length)
  // (length is 1 unless `consecutive`). Precondition: `lpn` is not cached; the run is cut
  // short before the first LPN that is, and at the end of the translation page.
  void insert_clean(Lpn lpn, std::uint32_t ppn, std::uint32_t length);
  // Records the new mapping lpn -> ppn (dirty), splitting any run that covers `lpn`; inserts
  // it if `lpn` was not cached. May leave the cache over budget.
  void set(Lpn lpn, std::uint32_t ppn);

  // The entry eviction would take next; nullopt when empty.
  std::optional<CachedRun> victim() const;
  // Drops the entry starting at `lpn` (a victim after the caller wrote it back if dirty).
  void remove(Lpn run_start);

  // Every dirty entry with lpn in [first, end), marked clean and returned in LPN order: the
  // caller is writing their translation page.
  std::vector<CachedRun> take_dirty(Lpn first, Lpn end);
  // The smallest LPN >= `from` that starts a dirty entry.
  std::optional<Lpn> next_dirty(Lpn from) const;

  std::uint64_t entry_count() const;
  std::uint64_t dirty_count() const;
  std::uint64_t bytes_used() const;
  std::uint64_t capacity_bytes() const;
  // A RAM manager moving the split between mapping and data changes the budget; the caller
  // evicts down to it.
  void set_capacity_bytes(std::uint64_t bytes);
  std::uint32_t entry_bytes() const;
  bool over_budget() const { return bytes_used() > capacity_bytes(); }
  // All entries in LPN order (tests and fsck).
  std::vector<CachedRun> entries() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace flashdir::ftl
