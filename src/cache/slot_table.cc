#include "cache/slot_table.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>

namespace flashdir::cache {
namespace {

// Calls fn(slot, value) for each recovered slot with the value `map` holds for the slot's file,
// looked up again only when the file changes: a restart finds them mostly in runs of one file.
template <typename Map, typename Fn>
void for_each_in_file_runs(std::span<const RecoveredSlot> slots, Map& map, const Fn& fn) {
  typename Map::mapped_type* value = nullptr;
  std::uint64_t file_id = 0;
  for (const RecoveredSlot& found : slots) {
    if (value == nullptr || found.entry.file_id != file_id) {
      file_id = found.entry.file_id;
      value = &map[file_id];
    }
    fn(found, *value);
  }
}

}  // namespace

SlotTable::SlotTable(const MetadataStore& store) : store_(store), flags_(store.layout().slot_count) {}

std::optional<SlotIndex> SlotTable::find(std::uint64_t file_id, std::uint64_t page_no) const {
  const FileSlots* file = file_slots(file_id);
  if (file == nullptr) return std::nullopt;
  const auto slot = file->pages.find(page_no, page_of());
  // The table holds only the file's own slots; checked all the same (the same entry the probe
  // just read), since a slot in the wrong table would hand out another file's page.
  if (slot && store_.file_id_of(*slot) != file_id) {
    assert(false && "a page table names a slot of another file");
    return std::nullopt;
  }
  return slot;
}

void SlotTable::insert(SlotIndex slot) {
  assert(!occupied(slot) && store_.entry(slot).has_value());
  const std::uint64_t file_id = store_.file_id_of(slot);
  file_slots(file_id);  // a table still in the image is read before the page joins it
  FilePages& pages = files_[file_id].pages;
  const std::size_t before = pages.ram_bytes();
  pages.insert(slot, page_of());
  page_table_bytes_ += pages.ram_bytes() - before;
  flag(slot) = kOccupied;
  ++used_;
}

void SlotTable::load(std::span<const RecoveredSlot> slots) {
  assert(used_ == 0);
  // Each file's table sized once for all its pages, then filled without lookups.
  absl::flat_hash_map<std::uint64_t, std::uint32_t> counts;
  for_each_in_file_runs(slots, counts, [](const RecoveredSlot&, std::uint32_t& count) { ++count; });
  for (const auto& [file_id, count] : counts) {
    FileSlots& file = files_[file_id];
    file.pages.reserve(count, page_of());
    page_table_bytes_ += file.pages.ram_bytes();
  }
  for_each_in_file_runs(slots, files_, [&](const RecoveredSlot& found, FileSlots& file) {
    file.pages.add_unique(found.slot, found.entry.page_no);
    flags_[found.slot] = kOccupied;
  });
  used_ = static_cast<std::int64_t>(slots.size());
}

void SlotTable::remove(SlotIndex slot) {
  assert(occupied(slot));
  const std::uint64_t file_id = store_.file_id_of(slot);
  FileSlots* file = file_slots(file_id);
  assert(file != nullptr);
  if (dirty(slot)) {
    --dirty_count_;
    --file->dirty;
  }
  const std::size_t before = file->pages.ram_bytes();
  if (!file->pages.erase(slot, page_of())) {
    spdlog::error("slot {} was not where file {}'s page table puts its page {}: the table disagrees with the entries",
                  slot, file_id, store_.page_no_of(slot));
    assert(false && "a page table that disagrees with the entries");
  }
  page_table_bytes_ -= before - file->pages.ram_bytes();
  // A file still queued for the flusher keeps its record until the queue lets it go.
  if (file->pages.empty() && !file->queued) files_.erase(file_id);
  flag(slot) = 0;
  --used_;
}

void SlotTable::remove(std::span<const SlotIndex> slots) {
  // Per file: how many of its slots go, then whether its index is rebuilt.
  absl::flat_hash_map<std::uint64_t, std::uint32_t> leaving;
  for (SlotIndex slot : slots) ++leaving[store_.file_id_of(slot)];
  absl::flat_hash_map<std::uint64_t, bool> rebuild;
  for (const auto& [file_id, count] : leaving)
    rebuild[file_id] = std::uint64_t{count} * 16 > file_slots(file_id)->pages.size();
  for (SlotIndex slot : slots) {
    assert(occupied(slot));
    const std::uint64_t file_id = store_.file_id_of(slot);
    if (!rebuild.at(file_id)) {
      remove(slot);
      continue;
    }
    if (dirty(slot)) {
      --dirty_count_;
      --files_.at(file_id).dirty;
    }
    flag(slot) = kLeaving;
    --used_;
  }
  for (const auto& [file_id, whole] : rebuild) {
    if (!whole) continue;
    const auto it = files_.find(file_id);
    FilePages& pages = it->second.pages;
    page_table_bytes_ -= pages.ram_bytes();
    pages.retain([this](SlotIndex slot) { return flags_[slot] != kLeaving; }, page_of());
    page_table_bytes_ += pages.ram_bytes();
    // A file still queued for the flusher keeps its record until the queue lets it go.
    if (pages.empty() && !it->second.queued) files_.erase(it);
  }
  for (SlotIndex slot : slots)
    if (flags_[slot] == kLeaving) flags_[slot] = 0;  // flag() marked them above: no chunk to read
}

void SlotTable::set_dirty(SlotIndex slot) {
  assert(occupied(slot));
  if (!dirty(slot)) {
    ++dirty_count_;
    FileSlots& file = *file_slots(store_.file_id_of(slot));
    if (file.dirty++ == 0 && !file.queued) {
      file.queued = true;
      dirty_files_.push_back(store_.file_id_of(slot));
    }
  }
  flag(slot) = static_cast<std::uint8_t>((flag(slot) | kDirty) & ~kFlushing);
}

bool SlotTable::finish_flush(SlotIndex slot) {
  if ((flag(slot) & (kDirty | kFlushing)) != (kDirty | kFlushing)) return false;
  flag(slot) = static_cast<std::uint8_t>(flag(slot) & ~(kDirty | kFlushing));
  --dirty_count_;
  --file_slots(store_.file_id_of(slot))->dirty;
  return true;
}

std::vector<SlotIndex> SlotTable::dirty_slots_of(std::uint64_t file_id, std::size_t max) {
  FileSlots* file = file_slots(file_id);
  if (file == nullptr || file->dirty == 0) return {};
  return file->pages.take_from_cursor(std::min<std::size_t>(max, file->dirty),
                                      [this](SlotIndex slot) { return dirty(slot); });
}

std::uint64_t SlotTable::next_dirty_file() {
  while (!dirty_files_.empty()) {
    const std::uint64_t file_id = dirty_files_.front();
    dirty_files_.pop_front();
    const auto it = files_.find(file_id);
    if (it->second.dirty > 0) {
      dirty_files_.push_back(file_id);  // the next call offers another file first
      return file_id;
    }
    it->second.queued = false;
    if (it->second.pages.empty()) files_.erase(it);
  }
  return 0;
}

SlotIndex SlotTable::advance_hand() {
  const SlotIndex slot = hand_;
  hand_ = hand_ + 1 == capacity() ? 0 : hand_ + 1;
  return slot;
}

std::optional<SlotIndex> SlotTable::next_for_insert() {
  if (dirty_count_ == capacity()) return std::nullopt;
  // While a sixteenth of the slots or more is free, the hand passes the occupied ones untouched
  // to the next free one: no page is evicted while the cache has room. A restart leaves every
  // page unreferenced and the hand at the first slot, and CLOCK alone then evicted the
  // restart's pages one by one at the misses that followed, each the next reader's.
  const std::uint32_t in_use = std::min(used(), capacity());
  if (in_use < capacity() && (capacity() - in_use) * 16 >= capacity()) {
    // At most one turn: used() is an estimate while a restart image is read in.
    for (std::uint32_t passed = 0; passed < capacity(); ++passed) {
      const SlotIndex slot = advance_hand();
      if (!occupied(slot)) return slot;
    }
  }
  // Two sweeps at most: the first clears every reference bit it passes.
  for (;;) {
    const SlotIndex slot = advance_hand();
    if (!occupied(slot)) return slot;
    if (dirty(slot)) continue;
    std::uint8_t& flags = flag(slot);
    if ((flags & kReferenced) == 0) return slot;
    flags = static_cast<std::uint8_t>(flags & ~kReferenced);
  }
}

std::vector<SlotIndex> SlotTable::slots_of(std::uint64_t file_id, std::uint64_t from_page) const {
  std::vector<SlotIndex> slots;
  const FileSlots* file = file_slots(file_id);
  if (file == nullptr) return slots;
  file->pages.for_each([&](SlotIndex slot) {
    if (store_.page_no_of(slot) >= from_page) slots.push_back(slot);
  });
  return slots;
}

std::size_t SlotTable::ram_bytes() const {
  // A flat_hash_map keeps one control byte and one (key, value) pair per bucket.
  return flags_.size() + page_table_bytes_ +
         files_.bucket_count() * (1 + sizeof(std::pair<const std::uint64_t, FileSlots>)) +
         dirty_files_.size() * sizeof(std::uint64_t);
}

}  // namespace flashdir::cache
