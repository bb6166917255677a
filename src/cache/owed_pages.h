// The pages a drain owes the backing file (EngineCore::drain_write_back): a file's pages that
// were dirty when it began, in page order, each taken once. A page written again after it was
// taken, or first dirtied since, is a later writer's to write back: chasing those, a close
// never returned while another open kept writing the file.
//
// Sorted once: a drain used to list all of the file's dirty slots for every batch and sort the
// lowest out of them (1.3 ms per 8 MiB batch of a 256 MiB file). Used under the cache lock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "cache/slot_table.h"

namespace flashdir::cache {

class OwedPages {
 public:
  OwedPages() = default;  // owes nothing
  OwedPages(SlotTable& slots, std::uint64_t file_id) : file_id_(file_id) {
    for (SlotIndex slot : slots.dirty_slots_of(file_id)) pages_.push_back({slots.key(slot).page_no, slot});
    std::sort(pages_.begin(), pages_.end());
  }

  // The next of them, at most `max`: those still dirty and holding the page they held (a
  // truncate drops slots, and a dropped slot may take another page since).
  std::vector<SlotIndex> take(const SlotTable& slots, std::size_t max) {
    std::vector<SlotIndex> taken;
    for (; next_ < pages_.size() && taken.size() < max; ++next_) {
      const auto [page_no, slot] = pages_[next_];
      if (slots.occupied(slot) && slots.dirty(slot) && slots.key(slot) == SlotKey{file_id_, page_no})
        taken.push_back(slot);
    }
    return taken;
  }

 private:
  std::uint64_t file_id_ = 0;
  std::vector<std::pair<std::uint64_t, SlotIndex>> pages_;  // (page number, slot), by page
  std::size_t next_ = 0;
};

}  // namespace flashdir::cache
