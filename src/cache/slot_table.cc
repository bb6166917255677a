#include "cache/slot_table.h"

#include <cassert>

namespace flashdir::cache {

SlotTable::SlotTable(std::uint32_t slot_count) : keys_(slot_count), flags_(slot_count, 0) {
  index_.reserve(slot_count);
}

const SlotIndex* SlotTable::find(const SlotKey& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &it->second;
}

void SlotTable::insert(SlotIndex slot, const SlotKey& key) {
  assert(!occupied(slot) && key.file_id != 0);
  keys_[slot] = key;
  flags_[slot] = 0;
  const bool inserted = index_.emplace(key, slot).second;
  assert(inserted);
  static_cast<void>(inserted);
}

void SlotTable::remove(SlotIndex slot) {
  assert(occupied(slot));
  if (dirty(slot)) --dirty_count_;
  index_.erase(keys_[slot]);
  keys_[slot] = SlotKey{};
  flags_[slot] = 0;
}

void SlotTable::set_dirty(SlotIndex slot) {
  assert(occupied(slot));
  if (!dirty(slot)) ++dirty_count_;
  flags_[slot] = static_cast<std::uint8_t>((flags_[slot] | kDirty) & ~kFlushing);
}

bool SlotTable::finish_flush(SlotIndex slot) {
  if ((flags_[slot] & (kDirty | kFlushing)) != (kDirty | kFlushing)) return false;
  flags_[slot] = static_cast<std::uint8_t>(flags_[slot] & ~(kDirty | kFlushing));
  --dirty_count_;
  return true;
}

std::optional<SlotIndex> SlotTable::next_for_insert() {
  if (dirty_count_ == capacity()) return std::nullopt;
  // Two sweeps at most: the first clears every reference bit it passes.
  for (;;) {
    const SlotIndex slot = hand_;
    hand_ = hand_ + 1 == capacity() ? 0 : hand_ + 1;
    if (!occupied(slot)) return slot;
    if (dirty(slot)) continue;
    if ((flags_[slot] & kReferenced) == 0) return slot;
    flags_[slot] = static_cast<std::uint8_t>(flags_[slot] & ~kReferenced);
  }
}

std::vector<SlotIndex> SlotTable::slots_of(std::uint64_t file_id, std::uint64_t from_page) const {
  std::vector<SlotIndex> slots;
  for (SlotIndex slot = 0; slot < capacity(); ++slot)
    if (keys_[slot].file_id == file_id && keys_[slot].page_no >= from_page) slots.push_back(slot);
  return slots;
}

std::vector<SlotIndex> SlotTable::dirty_slots_of(std::uint64_t file_id, std::size_t max) const {
  std::vector<SlotIndex> slots;
  for (SlotIndex slot = 0; slot < capacity() && slots.size() < max; ++slot)
    if (keys_[slot].file_id == file_id && dirty(slot)) slots.push_back(slot);
  return slots;
}

std::uint64_t SlotTable::next_dirty_file() {
  if (dirty_count_ == 0) return 0;
  for (SlotIndex seen = 0; seen < capacity(); ++seen) {
    const SlotIndex slot = dirty_hand_;
    dirty_hand_ = dirty_hand_ + 1 == capacity() ? 0 : dirty_hand_ + 1;
    if (dirty(slot)) return keys_[slot].file_id;
  }
  return 0;
}

std::size_t SlotTable::ram_bytes() const {
  // A flat_hash_map keeps one control byte and one (key, value) pair per bucket.
  return keys_.capacity() * sizeof(SlotKey) + flags_.capacity() +
         index_.bucket_count() * (1 + sizeof(std::pair<const SlotKey, SlotIndex>));
}

}  // namespace flashdir::cache
