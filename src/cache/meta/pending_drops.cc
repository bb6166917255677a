#include "cache/meta/pending_drops.h"

#include <algorithm>
#include <cassert>

namespace flashdir::cache::meta {

void PendingDrops::add(std::uint32_t metadata_page, const PendingDrop& drop) {
  // A file page is pending in one slot at most: caching it again elsewhere writes the old
  // slot's page first (MetadataStore::before_data_write), which takes the drop.
  const bool fresh = page_by_key_.emplace(std::make_pair(drop.file_id, drop.page_no), metadata_page).second;
  assert(fresh && "a file page pending a drop in two slots");
  (void)fresh;
  by_page_[metadata_page].push_back(drop);
  ++count_;
}

void PendingDrops::cancel(std::uint32_t metadata_page, std::uint32_t slot) {
  auto it = by_page_.find(metadata_page);
  if (it == by_page_.end()) return;
  auto& drops = it->second;
  for (auto d = drops.begin(); d != drops.end(); ++d) {
    if (d->slot != slot) continue;
    page_by_key_.erase(std::make_pair(d->file_id, d->page_no));
    drops.erase(d);
    --count_;
    break;
  }
  if (drops.empty()) by_page_.erase(it);
}

std::vector<PendingDrop> PendingDrops::take(std::uint32_t metadata_page) {
  auto it = by_page_.find(metadata_page);
  if (it == by_page_.end()) return {};
  std::vector<PendingDrop> drops = std::move(it->second);
  by_page_.erase(it);
  for (const PendingDrop& d : drops) page_by_key_.erase(std::make_pair(d.file_id, d.page_no));
  count_ -= drops.size();
  return drops;
}

std::optional<std::uint32_t> PendingDrops::page_holding(std::uint64_t file_id, std::uint64_t page_no) const {
  auto it = page_by_key_.find(std::make_pair(file_id, page_no));
  if (it == page_by_key_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::uint32_t> PendingDrops::pages_of_file(std::uint64_t file_id) const {
  std::vector<std::uint32_t> pages;
  for (const auto& [page, drops] : by_page_) {
    if (std::any_of(drops.begin(), drops.end(), [&](const PendingDrop& d) { return d.file_id == file_id; })) {
      pages.push_back(page);
    }
  }
  return pages;
}

std::vector<std::uint32_t> PendingDrops::all_pages() const {
  std::vector<std::uint32_t> pages;
  pages.reserve(by_page_.size());
  for (const auto& [page, drops] : by_page_) pages.push_back(page);
  return pages;
}

std::size_t PendingDrops::ram_bytes() const {
  std::size_t bytes = by_page_.bucket_count() * (1 + sizeof(decltype(by_page_)::value_type)) +
                      page_by_key_.bucket_count() * (1 + sizeof(decltype(page_by_key_)::value_type));
  for (const auto& [page, drops] : by_page_) bytes += drops.capacity() * sizeof(PendingDrop);
  return bytes;
}

}  // namespace flashdir::cache::meta
