#include "cache/slot_table.h"

#include <fmt/format.h>

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

SlotTable::SlotTable(const MetadataStore& store) : store_(store), flags_(store.layout().slot_count, 0) {}

std::optional<SlotIndex> SlotTable::find(std::uint64_t file_id, std::uint64_t page_no) const {
  const auto it = files_.find(file_id);
  if (it == files_.end()) return std::nullopt;
  return it->second.pages.find(page_no, page_of());
}

void SlotTable::insert(SlotIndex slot) {
  assert(!occupied(slot) && store_.entry(slot).has_value());
  FilePages& pages = files_[store_.file_id_of(slot)].pages;
  const std::size_t before = pages.ram_bytes();
  pages.insert(slot, page_of());
  page_table_bytes_ += pages.ram_bytes() - before;
  flags_[slot] = kOccupied;
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
  used_ = static_cast<std::uint32_t>(slots.size());
}

std::size_t SlotTable::image_bytes() const {
  std::size_t bytes = 4 + flags_.size() + 4;
  for (const auto& [file_id, file] : files_) bytes += file.pages.empty() ? 0 : 8 + file.pages.image_bytes();
  return bytes;
}

Status SlotTable::save_image(LittleEndianWriter& out) const {
  if (dirty_count_ != 0) return Status::invalid_argument("the slot table holds dirty pages");
  out.u32(used_);
  // Occupied or not: CLOCK starts afresh, as after a restart from the metadata pages.
  for (std::uint8_t flags : flags_) out.u8(flags & kOccupied);
  // A file the flusher's queue still lists may have no page left: it has no table to save.
  const auto with_pages = std::count_if(files_.begin(), files_.end(), [](const auto& f) { return !f.second.pages.empty(); });
  out.u32(static_cast<std::uint32_t>(with_pages));
  for (const auto& [file_id, file] : files_) {
    if (file.pages.empty()) continue;
    out.u64(file_id);
    file.pages.save_image(out);
  }
  return Status::ok();
}

Status SlotTable::restore_image(LittleEndianReader& in) {
  assert(used_ == 0 && files_.empty());
  auto refuse = [&](const std::string& why) {
    files_.clear();
    std::fill(flags_.begin(), flags_.end(), 0);
    used_ = hand_ = 0;
    page_table_bytes_ = 0;
    return Status::corruption(fmt::format("the slot table's part: {}", why));
  };
  if (in.remaining() < 4 + flags_.size() + 4) return refuse("cut short");
  const std::uint32_t used = in.u32();
  // Each file's tables must hold exactly the slots the store's entries give the file. Checked
  // per file by a count and a sum of hashed slot numbers, each side read in its own order: a
  // check that read each slot's entry from the tables would cost a cache miss per cached page,
  // the very cost the image saves. The hash is not linear in the slot number (a plain sum would
  // pass {1, 4} for {2, 3}).
  struct Tally {
    std::uint32_t count = 0;
    std::uint64_t sum = 0;
    void add(SlotIndex slot) {
      std::uint64_t h = std::uint64_t{slot} + 0x9E3779B97F4A7C15ULL;  // splitmix64's finalizer
      h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
      h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
      ++count;
      sum += h ^ (h >> 31);
    }
    bool operator==(const Tally&) const = default;
  };
  absl::flat_hash_map<std::uint64_t, Tally> expected;
  std::uint64_t last_file = 0;
  Tally* tally = nullptr;
  for (SlotIndex slot = 0; slot < capacity(); ++slot) {
    const std::uint8_t flags = in.u8();
    flags_[slot] = flags;
    const std::uint64_t file_id = store_.file_id_of(slot);
    if (flags == 0) {
      if (file_id != 0) return refuse("a free slot has an entry in the store");
      continue;
    }
    if (flags != kOccupied) return refuse("a slot holds flags other than occupied");
    if (file_id == 0) return refuse("a used slot has no entry in the store");
    if (tally == nullptr || file_id != last_file) {
      tally = &expected[file_id];
      last_file = file_id;
    }
    tally->add(slot);
  }
  const std::uint32_t files = in.u32();
  if (files != expected.size()) return refuse("it lists another number of files than the store's entries name");
  std::vector<bool> seen(capacity(), false);
  std::uint32_t placed = 0;
  for (std::uint32_t f = 0; f < files; ++f) {
    if (in.remaining() < 8) return refuse("cut short");
    const std::uint64_t file_id = in.u64();
    const auto wanted = expected.find(file_id);
    if (wanted == expected.end()) return refuse("a page table names a file no entry holds");
    Tally found;
    auto take = [&](SlotIndex slot) {
      if (slot >= capacity() || seen[slot] || flags_[slot] != kOccupied) return false;
      seen[slot] = true;
      found.add(slot);
      return true;
    };
    auto pages = FilePages::restore_image(in, take);
    if (!pages.is_ok()) return refuse(pages.status().message());
    if (!(found == wanted->second)) return refuse("a file's page table holds other slots than the store gives it");
    placed += pages->size();
    page_table_bytes_ += pages->ram_bytes();
    if (!files_.try_emplace(file_id, FileSlots{std::move(pages).value()}).second) return refuse("a file is listed twice");
  }
  if (placed != used) return refuse("its count of used slots is not that of its tables");
  used_ = used;
  return Status::ok();
}

std::vector<std::uint64_t> SlotTable::file_ids() const {
  std::vector<std::uint64_t> ids;
  ids.reserve(files_.size());
  for (const auto& [file_id, file] : files_) ids.push_back(file_id);
  return ids;
}

void SlotTable::remove(SlotIndex slot) {
  assert(occupied(slot));
  const auto it = files_.find(store_.file_id_of(slot));
  assert(it != files_.end());
  FileSlots& file = it->second;
  if (dirty(slot)) {
    --dirty_count_;
    --file.dirty;
  }
  const std::size_t before = file.pages.ram_bytes();
  file.pages.erase(slot, page_of());
  page_table_bytes_ -= before - file.pages.ram_bytes();
  // A file still queued for the flusher keeps its record until the queue lets it go.
  if (file.pages.empty() && !file.queued) files_.erase(it);
  flags_[slot] = 0;
  --used_;
}

void SlotTable::remove(std::span<const SlotIndex> slots) {
  // Per file: how many of its slots go, then whether its index is rebuilt.
  absl::flat_hash_map<std::uint64_t, std::uint32_t> leaving;
  for (SlotIndex slot : slots) ++leaving[store_.file_id_of(slot)];
  absl::flat_hash_map<std::uint64_t, bool> rebuild;
  for (const auto& [file_id, count] : leaving)
    rebuild[file_id] = std::uint64_t{count} * 16 > files_.at(file_id).pages.size();
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
    flags_[slot] = kLeaving;
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
    if (flags_[slot] == kLeaving) flags_[slot] = 0;
}

void SlotTable::set_dirty(SlotIndex slot) {
  assert(occupied(slot));
  if (!dirty(slot)) {
    ++dirty_count_;
    FileSlots& file = files_.at(store_.file_id_of(slot));
    if (file.dirty++ == 0 && !file.queued) {
      file.queued = true;
      dirty_files_.push_back(store_.file_id_of(slot));
    }
  }
  flags_[slot] = static_cast<std::uint8_t>((flags_[slot] | kDirty) & ~kFlushing);
}

bool SlotTable::finish_flush(SlotIndex slot) {
  if ((flags_[slot] & (kDirty | kFlushing)) != (kDirty | kFlushing)) return false;
  flags_[slot] = static_cast<std::uint8_t>(flags_[slot] & ~(kDirty | kFlushing));
  --dirty_count_;
  --files_.at(store_.file_id_of(slot)).dirty;
  return true;
}

std::vector<SlotIndex> SlotTable::dirty_slots_of(std::uint64_t file_id, std::size_t max) {
  const auto it = files_.find(file_id);
  if (it == files_.end() || it->second.dirty == 0) return {};
  return it->second.pages.take_from_cursor(std::min<std::size_t>(max, it->second.dirty),
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
  const auto it = files_.find(file_id);
  if (it == files_.end()) return slots;
  it->second.pages.for_each([&](SlotIndex slot) {
    if (store_.page_no_of(slot) >= from_page) slots.push_back(slot);
  });
  return slots;
}

std::size_t SlotTable::ram_bytes() const {
  // A flat_hash_map keeps one control byte and one (key, value) pair per bucket.
  return flags_.capacity() + page_table_bytes_ +
         files_.bucket_count() * (1 + sizeof(std::pair<const std::uint64_t, FileSlots>)) +
         dirty_files_.size() * sizeof(std::uint64_t);
}

}  // namespace flashdir::cache
