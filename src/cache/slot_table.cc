#include "cache/slot_table.h"

#include <cassert>

namespace flashdir::cache {

SlotTable::SlotTable(std::uint32_t slot_count) : keys_(slot_count), referenced_(slot_count, 0) {
  index_.reserve(slot_count);
}

const SlotIndex* SlotTable::find(const SlotKey& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &it->second;
}

void SlotTable::insert(SlotIndex slot, const SlotKey& key) {
  assert(!occupied(slot) && key.file_id != 0);
  keys_[slot] = key;
  referenced_[slot] = 0;
  const bool inserted = index_.emplace(key, slot).second;
  assert(inserted);
  static_cast<void>(inserted);
}

void SlotTable::remove(SlotIndex slot) {
  assert(occupied(slot));
  index_.erase(keys_[slot]);
  keys_[slot] = SlotKey{};
  referenced_[slot] = 0;
}

SlotIndex SlotTable::next_for_insert() {
  // Two sweeps at most: the first clears every reference bit it passes.
  for (;;) {
    const SlotIndex slot = hand_;
    hand_ = hand_ + 1 == capacity() ? 0 : hand_ + 1;
    if (!occupied(slot) || referenced_[slot] == 0) return slot;
    referenced_[slot] = 0;
  }
}

std::vector<SlotIndex> SlotTable::slots_of(std::uint64_t file_id, std::uint64_t from_page) const {
  std::vector<SlotIndex> slots;
  for (SlotIndex slot = 0; slot < capacity(); ++slot)
    if (keys_[slot].file_id == file_id && keys_[slot].page_no >= from_page) slots.push_back(slot);
  return slots;
}

std::size_t SlotTable::ram_bytes() const {
  // A flat_hash_map keeps one control byte and one (key, value) pair per bucket.
  return keys_.capacity() * sizeof(SlotKey) + referenced_.capacity() +
         index_.bucket_count() * (1 + sizeof(std::pair<const SlotKey, SlotIndex>));
}

}  // namespace flashdir::cache
