// Layout: runs live in a slot pool (a vector with a free list, so steady-state operations do
// not allocate); a B-tree maps each run's first LPN to its slot for range lookup; a B-tree set
// holds the first LPNs of dirty runs so that write-back never walks clean entries; and an
// EvictionOrder keeps the LRU or LFU order in O(1).
//
// Access counting: lookup() counts an access to the run it hits; insert_clean() and set()
// count one for the entry they create or overwrite, so a fresh entry is never the least
// recently used one (under LFU it starts at the eviction order's age plus one). A page that
// set() adds to a run refreshes the run's recency only.
#include "entry_cache.h"

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cassert>
#include <limits>

#include "eviction_order.h"

namespace flashdir::ftl {
namespace {

constexpr std::uint32_t kNoSlot = EvictionOrder::kNone;

struct Run {
  std::uint64_t lpn = 0;
  std::uint32_t ppn = kUnmappedPpn;
  std::uint32_t length = 1;
  bool dirty = false;

  std::uint64_t end() const { return lpn + length; }
  bool covers(std::uint64_t page) const { return page >= lpn && page < end(); }
  // The PPN of `page` inside the run; an unmapped or lost run stays so at every offset.
  std::uint32_t ppn_of(std::uint64_t page) const {
    assert(covers(page));
    return run_entry(ppn, static_cast<std::uint32_t>(page - lpn));
  }
  CachedRun to_cached() const { return CachedRun{Lpn(lpn), ppn, length, dirty}; }
};

}  // namespace

struct EntryCache::State {
  explicit State(const EntryCacheOptions& o) : options(o), order(o.eviction) {}

  EntryCacheOptions options;
  // Runs by first LPN. With the consecutive field a lookup needs the run starting at or
  // before an LPN, so the index is ordered; without it every run is one page and a hash map
  // answers in one probe (the hot path of DFTL).
  absl::btree_map<std::uint64_t, std::uint32_t> slot_by_start;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> slot_by_page;

  bool ordered() const { return options.consecutive; }
  std::uint64_t indexed() const { return ordered() ? slot_by_start.size() : slot_by_page.size(); }
  // The slot of the run starting at `lpn`, or kNoSlot.
  std::uint32_t starting_at(std::uint64_t lpn) const {
    if (ordered()) {
      auto it = slot_by_start.find(lpn);
      return it == slot_by_start.end() ? kNoSlot : it->second;
    }
    auto it = slot_by_page.find(lpn);
    return it == slot_by_page.end() ? kNoSlot : it->second;
  }
  void unindex(std::uint64_t lpn) {
    if (ordered()) slot_by_start.erase(lpn);
    else slot_by_page.erase(lpn);
  }
  absl::btree_set<std::uint64_t> dirty_starts;
  std::vector<Run> runs;  // indexed by slot
  std::vector<std::uint32_t> free_slots;
  EvictionOrder order;

  // The slot of the run covering `lpn`, or kNoSlot. The pages of one request usually fall in
  // the run the previous page hit, so that run is tried before the B-tree.
  std::uint32_t find_covering(std::uint64_t lpn) const {
    if (last_hit != kNoSlot && runs[last_hit].covers(lpn)) return last_hit;
    if (!ordered()) return starting_at(lpn);
    auto it = slot_by_start.upper_bound(lpn);
    if (it == slot_by_start.begin()) return kNoSlot;
    --it;
    const std::uint32_t slot = it->second;
    if (!runs[slot].covers(lpn)) return kNoSlot;
    last_hit = slot;
    return slot;
  }
  mutable std::uint32_t last_hit = kNoSlot;  // a slot in use, or kNoSlot

  // Stores `run` in a slot and indexes it; the caller links it into the eviction order.
  std::uint32_t add(const Run& run) {
    std::uint32_t slot;
    if (free_slots.empty()) {
      assert(runs.size() < kNoSlot && "slot numbers exhausted");
      slot = static_cast<std::uint32_t>(runs.size());
      runs.push_back(run);
    } else {
      slot = free_slots.back();
      free_slots.pop_back();
      runs[slot] = run;
    }
    [[maybe_unused]] const bool inserted =
        ordered() ? slot_by_start.emplace(run.lpn, slot).second : slot_by_page.emplace(run.lpn, slot).second;
    assert(inserted && "two runs start at the same LPN");
    if (run.dirty) dirty_starts.insert(run.lpn);
    return slot;
  }

  // Unindexes the run in `slot` and frees the slot; the caller unlinks it from the order.
  void drop(std::uint32_t slot) {
    const Run& run = runs[slot];
    if (run.dirty) dirty_starts.erase(run.lpn);
    unindex(run.lpn);
    free_slots.push_back(slot);
    if (last_hit == slot) last_hit = kNoSlot;
  }

  void mark_dirty(std::uint32_t slot) {
    Run& run = runs[slot];
    if (run.dirty) return;
    run.dirty = true;
    dirty_starts.insert(run.lpn);
  }

  // Takes `lpn` out of the run in `slot`, which is longer than one page; the pages before and
  // after it stay cached.
  void cut_out(std::uint32_t slot, std::uint64_t lpn);
  // Drops the pages of the run in `slot` before `start`, which becomes its first LPN.
  void move_start(std::uint32_t slot, std::uint64_t start);
  // The dirty run that ends right before `lpn`, in the same translation page, and whose
  // mapping lpn -> ppn continues; kNoSlot if there is none.
  std::uint32_t continued_by(std::uint64_t lpn, std::uint32_t ppn) const;
};

void EntryCache::State::cut_out(std::uint32_t slot, std::uint64_t lpn) {
  const Run old = runs[slot];
  assert(old.covers(lpn) && old.length > 1);
  // The parts that stay keep the run's frequency and recency: the accesses it counted were to
  // them as much as to `lpn`.
  if (lpn == old.lpn) {
    move_start(slot, lpn + 1);  // the old slot keeps the right part
    return;
  }
  runs[slot].length = static_cast<std::uint32_t>(lpn - old.lpn);  // the left part
  if (lpn + 1 < old.end()) {
    const Run right{lpn + 1, old.ppn_of(lpn + 1), static_cast<std::uint32_t>(old.end() - lpn - 1), old.dirty};
    order.insert_beside(add(right), slot);
  }
}

void EntryCache::State::move_start(std::uint32_t slot, std::uint64_t start) {
  Run& run = runs[slot];
  assert(ordered() && start > run.lpn && start < run.end());
  slot_by_start.erase(run.lpn);
  slot_by_start.emplace(start, slot);
  if (run.dirty) {
    dirty_starts.erase(run.lpn);
    dirty_starts.insert(start);
  }
  run.ppn = run.ppn_of(start);
  run.length = static_cast<std::uint32_t>(run.end() - start);
  run.lpn = start;
}

std::uint32_t EntryCache::State::continued_by(std::uint64_t lpn, std::uint32_t ppn) const {
  if (!ordered() || lpn % options.translation_page_entries == 0) return kNoSlot;
  const std::uint32_t slot = find_covering(lpn - 1);
  if (slot == kNoSlot || !runs[slot].dirty) return kNoSlot;
  assert(runs[slot].end() == lpn && "continued_by of a cached LPN");
  const std::uint32_t last = runs[slot].ppn_of(lpn - 1);
  const bool continues = is_physical(ppn) ? is_physical(last) && ppn == last + 1 : last == ppn;
  return continues ? slot : kNoSlot;
}

EntryCache::EntryCache(const EntryCacheOptions& options)
    : state_(std::make_unique<State>(options)) {
  assert(options.entry_bytes > 0);
  assert((!options.consecutive || options.translation_page_entries > 0) && "runs need a translation page size");
}

EntryCache::~EntryCache() = default;

std::optional<std::uint32_t> EntryCache::lookup(Lpn lpn) {
  const std::uint32_t slot = state_->find_covering(lpn.value);
  if (slot == kNoSlot) return std::nullopt;
  state_->order.touch(slot);
  return state_->runs[slot].ppn_of(lpn.value);
}

std::optional<std::uint32_t> EntryCache::peek(Lpn lpn) const {
  const std::uint32_t slot = state_->find_covering(lpn.value);
  if (slot == kNoSlot) return std::nullopt;
  return state_->runs[slot].ppn_of(lpn.value);
}

void EntryCache::insert_clean(Lpn lpn, std::uint32_t ppn, std::uint32_t length) {
  State& s = *state_;
  assert(length > 0);
  assert(s.find_covering(lpn.value) == kNoSlot && "insert_clean of a cached LPN");
  assert(length <= std::numeric_limits<std::uint64_t>::max() - lpn.value);
  // Without the consecutive field (DFTL) an entry maps one page, whatever the caller saw; with
  // it a run ends with its translation page, so that one page write takes it back.
  const std::uint64_t E = s.options.translation_page_entries;
  length = s.options.consecutive ? static_cast<std::uint32_t>(std::min<std::uint64_t>(length, E - lpn.value % E)) : 1;
  // Cut the run short before the next cached LPN: the cached entry is newer than the
  // translation page the run was read from.
  if (s.ordered()) {
    if (auto next = s.slot_by_start.upper_bound(lpn.value); next != s.slot_by_start.end()) {
      length = static_cast<std::uint32_t>(std::min<std::uint64_t>(length, next->first - lpn.value));
    }
  }
  assert((!is_physical(ppn) || std::uint64_t{ppn} + length <= kLostPpn) && "a mapped run would reach the marks");
  s.order.insert_accessed(s.add(Run{lpn.value, ppn, length, false}));
}

void EntryCache::set(Lpn lpn, std::uint32_t ppn) {
  State& s = *state_;
  const std::uint32_t slot = s.find_covering(lpn.value);
  const bool single = slot != kNoSlot && s.runs[slot].length == 1;
  if (slot != kNoSlot && !single) s.cut_out(slot, lpn.value);
  // The written page joins the dirty run it continues (a sequential write then costs one
  // entry per translation page, not one per page), or keeps its own entry, or starts a new
  // one. It never inherits the frequency of a run it left: that would copy the count into
  // every page a sequential write splits off, and such pages would outrank everything read
  // later. Joining a run refreshes its recency without counting an access to its pages.
  if (const std::uint32_t run = s.continued_by(lpn.value, ppn); run != kNoSlot) {
    if (single) {
      s.order.erase(slot);
      s.drop(slot);
    }
    ++s.runs[run].length;
    s.order.refresh(run);
  } else if (single) {
    s.runs[slot].ppn = ppn;
    s.mark_dirty(slot);
    s.order.touch(slot);
  } else {
    s.order.insert_accessed(s.add(Run{lpn.value, ppn, 1, true}));
  }
}

std::optional<CachedRun> EntryCache::victim() const {
  const std::uint32_t slot = state_->order.front();
  if (slot == kNoSlot) return std::nullopt;
  return state_->runs[slot].to_cached();
}

void EntryCache::remove(Lpn run_start) {
  State& s = *state_;
  const std::uint32_t slot = s.starting_at(run_start.value);
  assert(slot != kNoSlot && "remove of an LPN that starts no entry");
  if (slot == kNoSlot) return;
  s.order.evict(slot);
  s.drop(slot);
}

std::vector<CachedRun> EntryCache::take_dirty(Lpn first, Lpn end) {
  State& s = *state_;
  std::vector<CachedRun> taken;
  if (first >= end) return taken;
  const auto begin_it = s.dirty_starts.lower_bound(first.value);
  const auto end_it = s.dirty_starts.lower_bound(end.value);
  for (auto it = begin_it; it != end_it; ++it) {
    const std::uint32_t slot = s.starting_at(*it);
    assert(slot != kNoSlot && "a dirty start without an entry");
    Run& run = s.runs[slot];
    assert(run.dirty);
    run.dirty = false;
    taken.push_back(run.to_cached());
  }
  s.dirty_starts.erase(begin_it, end_it);
  return taken;
}

std::optional<Lpn> EntryCache::next_dirty(Lpn from) const {
  const auto it = state_->dirty_starts.lower_bound(from.value);
  if (it == state_->dirty_starts.end()) return std::nullopt;
  return Lpn(*it);
}

std::uint64_t EntryCache::entry_count() const { return state_->indexed(); }

std::uint64_t EntryCache::dirty_count() const { return state_->dirty_starts.size(); }

std::uint64_t EntryCache::bytes_used() const {
  return entry_count() * state_->options.entry_bytes;
}

std::uint64_t EntryCache::capacity_bytes() const { return state_->options.capacity_bytes; }
void EntryCache::set_capacity_bytes(std::uint64_t bytes) { state_->options.capacity_bytes = bytes; }
std::uint32_t EntryCache::entry_bytes() const { return state_->options.entry_bytes; }

std::vector<CachedRun> EntryCache::entries() const {
  std::vector<CachedRun> all;
  all.reserve(state_->indexed());
  for (const auto& [start, slot] : state_->slot_by_start) all.push_back(state_->runs[slot].to_cached());
  for (const auto& [start, slot] : state_->slot_by_page) all.push_back(state_->runs[slot].to_cached());
  std::sort(all.begin(), all.end(), [](const CachedRun& a, const CachedRun& b) { return a.lpn < b.lpn; });
  return all;
}

}  // namespace flashdir::ftl
