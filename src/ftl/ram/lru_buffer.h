// The data write buffer of the partitioned RAM policies (static, aps): buffered pages in LRU
// order, bounded in pages. Writes are buffered, reads hit what is buffered; the least
// recently used page leaves first.
//
// Not thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <list>
#include <optional>
#include <vector>

#include "buffered_page.h"

namespace flashdir::ram {

class LruBuffer {
 public:
  // The buffered page of `lpn`, made most recently used; nullptr if not buffered.
  BufferedPage* find(Lpn lpn);
  // Buffers `page` as most recently used; a replaced page passes on its pending_since, which is
  // returned.
  std::optional<std::uint64_t> put(BufferedPage page);
  // Removes the page of `lpn`; returns its pending_since if it was buffered.
  std::optional<std::uint64_t> drop(Lpn lpn);
  // Removes and returns the least recently used page.
  std::optional<BufferedPage> pop_lru();
  // Removes and returns every page, in LPN order.
  std::vector<BufferedPage> drain();

  std::uint64_t pages() const { return index_.size(); }

 private:
  std::list<BufferedPage> order_;  // front: least recently used
  absl::flat_hash_map<std::uint64_t, std::list<BufferedPage>::iterator> index_;
};

}  // namespace flashdir::ram
