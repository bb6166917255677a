// Which file page each cache slot holds, the index from file page to slot, and CLOCK
// replacement over the slots (doc/cache.md "Slots and replacement").
//
// A slot is one data LPN of the FTL (SlotLayout::data_lpn). The table only keeps RAM state;
// the MetadataStore puts it on the chip. Not thread-safe: the engine holds its cache lock.
#pragma once

#include <cstdint>
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
  void reference(SlotIndex slot) { referenced_[slot] = 1; }

  // The slot the next page goes into: a free slot where the hand stands, or the CLOCK victim
  // (occupied: the caller evicts it). The hand moves on, so consecutive calls on a cold cache
  // give consecutive slots — the runs the FTL wants.
  SlotIndex next_for_insert();
  // Every slot of `file_id` (a scan of the table: invalidation and truncation are rare).
  std::vector<SlotIndex> slots_of(std::uint64_t file_id, std::uint64_t from_page = 0) const;

  // RAM this table holds, measured from its containers.
  std::size_t ram_bytes() const;

 private:
  std::vector<SlotKey> keys_;
  std::vector<std::uint8_t> referenced_;
  absl::flat_hash_map<SlotKey, SlotIndex> index_;
  SlotIndex hand_ = 0;
};

}  // namespace flashdir::cache
