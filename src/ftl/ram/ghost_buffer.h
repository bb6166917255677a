// APS's ghost buffer (papers/aps-adaptive-partitioning.txt III-B): the LPNs of pages recently
// evicted from the write buffer, most recent last, bounded by the buffer space the policy does
// not have. A hit there is a miss a larger buffer would not have had.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <list>

#include "flashdir/types.h"

namespace flashdir::ram {

class GhostBuffer {
 public:
  void set_capacity(std::uint64_t pages);
  void insert(Lpn lpn);
  bool contains(Lpn lpn) const { return index_.count(lpn.value) != 0; }
  void erase(Lpn lpn);
  std::uint64_t size() const { return index_.size(); }
  std::uint64_t capacity() const { return capacity_; }

 private:
  void shrink();
  std::uint64_t capacity_ = 0;
  std::list<std::uint64_t> order_;  // front: evicted longest ago
  absl::flat_hash_map<std::uint64_t, std::list<std::uint64_t>::iterator> index_;
};

}  // namespace flashdir::ram
