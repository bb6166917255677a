#include "slot_sort.h"

#include <fmt/format.h>

namespace flashdir {
namespace {

std::uint64_t slots_in(const std::map<std::uint64_t, std::vector<cache::RecoveredSlot>>& by_file) {
  std::uint64_t n = 0;
  for (const auto& [id, slots] : by_file) n += slots.size();
  return n;
}

}  // namespace

std::uint64_t SlotSort::dirty_slots() const {
  std::uint64_t n = 0;
  for (const auto& [id, count] : dirty) n += count;
  return n;
}
std::uint64_t SlotSort::orphan_dirty_slots() const { return slots_in(orphan_dirty); }
std::uint64_t SlotSort::lost_dirty_slots() const { return slots_in(lost_dirty); }

std::vector<cache::SlotIndex> SlotSort::to_drop() const {
  std::vector<cache::SlotIndex> slots = orphans;
  slots.insert(slots.end(), lost_clean.begin(), lost_clean.end());
  for (const auto& by_file : {orphan_dirty, lost_dirty}) {
    for (const auto& [id, dirty_slots] : by_file) {
      for (const cache::RecoveredSlot& dirty_slot : dirty_slots) slots.push_back(dirty_slot.slot);
    }
  }
  for (const DamagedDirtySlot& damaged_slot : damaged) slots.push_back(damaged_slot.slot);
  return slots;
}

Result<SlotSort> sort_slots(const cache::RecoveredSlots& recovered, const CatalogView& catalog, Ftl& ftl,
                            const cache::SlotLayout& layout) {
  SlotSort sort;
  std::vector<std::uint8_t> page(layout.page_size_bytes);
  for (const cache::RecoveredSlot& found : recovered.usable) {
    const std::uint64_t id = found.entry.file_id;
    const bool known = catalog.files.contains(id);
    const bool lost_record = !known && id >= catalog.next_file_id;
    if (lost_record) ++sort.lost_files[id];
    if (!found.entry.dirty) {
      if (known) {
        ++sort.kept;
      } else {
        (lost_record ? sort.lost_clean : sort.orphans).push_back(found.slot);
      }
      continue;
    }
    // The only copy of bytes never written back: a read that fails now fails the write-back too.
    if (Status read = ftl.read(layout.data_lpn(found.slot), 1, page); !read.is_ok()) {
      if (read.code() != StatusCode::corruption) return read;
      sort.damaged.push_back({found.slot, found.entry, read.message()});
      continue;
    }
    if (known) {
      ++sort.kept;
      ++sort.dirty[id];
    } else {
      (lost_record ? sort.lost_dirty : sort.orphan_dirty)[id].push_back(found);
    }
  }
  return sort;
}

std::string describe_page(const CatalogView& catalog, cache::SlotIndex slot, const cache::SlotEntry& entry) {
  const auto file = catalog.files.find(entry.file_id);
  const std::string whose = file != catalog.files.end() ? file->second.relative_path
                                                        : std::string("a file the catalog does not know");
  return fmt::format("page {} of {} (file id {}, slot {})", entry.page_no, whose, entry.file_id, slot);
}

}  // namespace flashdir
