#include "lru_buffer.h"

#include <algorithm>

namespace flashdir::ram {

BufferedPage* LruBuffer::find(Lpn lpn) {
  auto it = index_.find(lpn.value);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.end(), order_, it->second);
  return &*it->second;
}

std::optional<std::uint64_t> LruBuffer::put(BufferedPage page) {
  auto it = index_.find(page.lpn.value);
  if (it != index_.end()) {
    const std::uint64_t replaced = it->second->pending_since;
    page.pending_since = replaced;
    *it->second = std::move(page);
    order_.splice(order_.end(), order_, it->second);
    return replaced;
  }
  const std::uint64_t lpn = page.lpn.value;
  order_.push_back(std::move(page));
  index_.emplace(lpn, std::prev(order_.end()));
  return std::nullopt;
}

std::optional<std::uint64_t> LruBuffer::drop(Lpn lpn) {
  auto it = index_.find(lpn.value);
  if (it == index_.end()) return std::nullopt;
  const std::uint64_t pending = it->second->pending_since;
  order_.erase(it->second);
  index_.erase(it);
  return pending;
}

std::optional<BufferedPage> LruBuffer::pop_lru() {
  if (order_.empty()) return std::nullopt;
  BufferedPage page = std::move(order_.front());
  index_.erase(page.lpn.value);
  order_.pop_front();
  return page;
}

std::vector<BufferedPage> LruBuffer::drain() {
  std::vector<BufferedPage> pages(std::make_move_iterator(order_.begin()), std::make_move_iterator(order_.end()));
  order_.clear();
  index_.clear();
  std::sort(pages.begin(), pages.end(), [](const BufferedPage& a, const BufferedPage& b) { return a.lpn < b.lpn; });
  return pages;
}

}  // namespace flashdir::ram
