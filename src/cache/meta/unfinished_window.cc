#include "cache/meta/unfinished_window.h"

#include <algorithm>
#include <cassert>

namespace flashdir::cache::meta {

UnfinishedWindow::Entry* UnfinishedWindow::find(std::uint32_t page) {
  for (Entry& entry : entries_) {
    if (entry.page == page) return &entry;
  }
  return nullptr;
}

const UnfinishedWindow::Entry* UnfinishedWindow::find(std::uint32_t page) const {
  return const_cast<UnfinishedWindow*>(this)->find(page);
}

bool UnfinishedWindow::contains(std::uint32_t page) const { return find(page) != nullptr; }

void UnfinishedWindow::add(std::uint32_t page, std::uint32_t slot) {
  if (Entry* entry = find(page)) {
    if (std::find(entry->slots.begin(), entry->slots.end(), slot) == entry->slots.end()) entry->slots.push_back(slot);
    return;
  }
  assert(entries_.size() < capacity_);
  entries_.push_back({page, {slot}});
}

std::vector<std::uint32_t> UnfinishedWindow::finish(std::uint32_t page, std::uint32_t slot) {
  if (Entry* entry = find(page)) {
    auto& slots = entry->slots;
    slots.erase(std::remove(slots.begin(), slots.end(), slot), slots.end());
  }
  std::vector<std::uint32_t> left;
  while (!entries_.empty() && entries_.front().slots.empty()) {
    left.push_back(entries_.front().page);
    entries_.pop_front();
  }
  return left;
}

std::optional<std::uint32_t> UnfinishedWindow::oldest_page() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.front().page;
}

const std::vector<std::uint32_t>& UnfinishedWindow::unfinished_slots(std::uint32_t page) const {
  static const std::vector<std::uint32_t> kNone;
  const Entry* entry = find(page);
  return entry != nullptr ? entry->slots : kNone;
}

std::vector<std::uint32_t> UnfinishedWindow::pages() const {
  std::vector<std::uint32_t> result;
  result.reserve(entries_.size());
  for (const Entry& entry : entries_) result.push_back(entry.page);
  return result;
}

}  // namespace flashdir::cache::meta
