#include "ghost_buffer.h"

namespace flashdir::ram {

void GhostBuffer::set_capacity(std::uint64_t pages) {
  capacity_ = pages;
  shrink();
}

void GhostBuffer::insert(Lpn lpn) {
  erase(lpn);
  order_.push_back(lpn.value);
  index_.emplace(lpn.value, std::prev(order_.end()));
  shrink();
}

void GhostBuffer::erase(Lpn lpn) {
  auto it = index_.find(lpn.value);
  if (it == index_.end()) return;
  order_.erase(it->second);
  index_.erase(it);
}

void GhostBuffer::shrink() {
  while (index_.size() > capacity_) {
    index_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace flashdir::ram
