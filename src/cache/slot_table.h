// Which file page each cache slot holds, the index from file page to slot, and CLOCK
// replacement over the slots (doc/cache.md "Slots and replacement").
//
// A slot is one data LPN of the FTL (SlotLayout::data_lpn). The table only keeps RAM state;
// the MetadataStore puts it on the chip. Not thread-safe: the engine holds its cache lock.
//
// Per slot, one byte of flags: referenced (CLOCK), dirty (write-back: newer than the backing
// file), flushing (the flusher is writing it back; a rewrite in the meantime clears it, so the
// flusher knows not to mark the newer data clean).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cache/meta/metadata_store.h"

namespace flashdir::cache {

struct SlotKey {
  std::uint64_t file_id = 0;  // 0: the slot is free
  std::uint64_t page_no = 0;
  bool operator==(const SlotKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H state, const SlotKey& key) {
    return H::combine(std::move(state), key.file_id, key.page_no);
  }
};

class SlotTable {
 public:
  explicit SlotTable(std::uint32_t slot_count);

  std::uint32_t capacity() const { return static_cast<std::uint32_t>(keys_.size()); }
  std::uint32_t used() const { return static_cast<std::uint32_t>(index_.size()); }
  // The slot holding `key`, if cached.
  const SlotIndex* find(const SlotKey& key) const;
  bool occupied(SlotIndex slot) const { return keys_[slot].file_id != 0; }
  const SlotKey& key(SlotIndex slot) const { return keys_[slot]; }

  // `slot` (free) now holds `key` (not cached). A new page starts unreferenced: CLOCK gives it
  // one sweep of the hand to be read again.
  void insert(SlotIndex slot, const SlotKey& key);
  void remove(SlotIndex slot);
  // A hit: the hand passes this slot once before evicting it.
  void reference(SlotIndex slot) { flags_[slot] |= kReferenced; }

  bool dirty(SlotIndex slot) const { return (flags_[slot] & kDirty) != 0; }
  std::uint32_t dirty_count() const { return dirty_count_; }
  // The page was (re)written and is newer than the backing file; a flush in progress of it no
  // longer covers it.
  void set_dirty(SlotIndex slot);
  // The flusher starts writing `slot` back.
  void set_flushing(SlotIndex slot) { flags_[slot] |= kFlushing; }
  // True if `slot` was not rewritten since set_flushing (it is then clean).
  bool finish_flush(SlotIndex slot);
  // Up to `max` dirty slots of `file_id`, in table order.
  std::vector<SlotIndex> dirty_slots_of(std::uint64_t file_id, std::size_t max = SIZE_MAX) const;
  // The file of some dirty slot, searching from where the last search stopped; 0 if none.
  std::uint64_t next_dirty_file();

  // The slot the next page goes into: a free slot where the hand stands, or the CLOCK victim
  // (occupied: the caller evicts it). Dirty slots are never victims; none is returned when
  // every slot is dirty. The hand moves on, so consecutive calls on a cold cache give
  // consecutive slots — the runs the FTL wants.
  std::optional<SlotIndex> next_for_insert();
  // Every slot of `file_id` (a scan of the table: invalidation and truncation are rare).
  std::vector<SlotIndex> slots_of(std::uint64_t file_id, std::uint64_t from_page = 0) const;

  // RAM this table holds, measured from its containers.
  std::size_t ram_bytes() const;

 private:
  std::vector<SlotKey> keys_;
  static constexpr std::uint8_t kReferenced = 1, kDirty = 2, kFlushing = 4;
  std::vector<std::uint8_t> flags_;
  absl::flat_hash_map<SlotKey, SlotIndex> index_;
  SlotIndex hand_ = 0;
  SlotIndex dirty_hand_ = 0;
  std::uint32_t dirty_count_ = 0;
};

}  // namespace flashdir::cache
