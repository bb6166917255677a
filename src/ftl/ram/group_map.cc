#include "group_map.h"

#include <algorithm>
#include <cassert>

#include "ftl/mapcache/entry_cache.h"

namespace flashdir::ram {

using ftl::run_entry;

bool GroupMap::continues(std::uint32_t previous, std::uint32_t next) const {
  return shape_->consecutive && next == run_entry(previous, 1);
}

bool GroupMap::boundary_after(std::uint32_t offset) const {
  return offset + 1 < entries_.size() && !continues(entries_[offset], entries_[offset + 1]);
}

absl::btree_map<std::uint32_t, GroupMap::Run>::const_iterator GroupMap::covering(std::uint32_t offset) const {
  auto it = runs_.upper_bound(offset);
  if (it == runs_.begin()) return runs_.end();
  --it;
  return offset - it->first < it->second.length ? it : runs_.end();
}

std::optional<std::uint32_t> GroupMap::find(std::uint32_t offset) const {
  if (whole_) return entries_[offset];
  auto it = covering(offset);
  if (it == runs_.end()) return std::nullopt;
  return run_entry(it->second.ppn, offset - it->first);
}

void GroupMap::load_whole(std::span<const std::uint32_t> page) {
  assert(!whole_ && page.size() == shape_->entries);
  entries_.assign(page.begin(), page.end());
  for (const auto& [first, run] : runs_) {
    for (std::uint32_t i = 0; i < run.length; ++i) entries_[first + i] = run_entry(run.ppn, i);
  }
  runs_.clear();
  whole_ = true;
  whole_runs_ = runs_of(entries_);
}

void GroupMap::load_run(std::span<const std::uint32_t> page, std::uint32_t offset) {
  assert(shape_->compact && !whole_ && !find(offset));
  std::uint32_t first = offset;
  std::uint32_t end = offset + 1;
  while (first > 0 && continues(page[first - 1], page[first])) --first;
  while (end < page.size() && continues(page[end - 1], page[end])) ++end;
  auto next = runs_.upper_bound(offset);
  if (next != runs_.end()) end = std::min(end, next->first);
  if (next != runs_.begin()) {
    auto previous = std::prev(next);
    first = std::max(first, previous->first + previous->second.length);
  }
  runs_.emplace(first, Run{page[first], end - first, false});
}

void GroupMap::set(std::uint32_t offset, std::uint32_t ppn) {
  if (whole_) {
    // The runs count changes only at the two boundaries around the entry.
    if (offset > 0 && boundary_after(offset - 1)) --whole_runs_;
    if (boundary_after(offset)) --whole_runs_;
    entries_[offset] = ppn;
    if (offset > 0 && boundary_after(offset - 1)) ++whole_runs_;
    if (boundary_after(offset)) ++whole_runs_;
    return;
  }
  assert(shape_->compact && "only stack sets entries of a page it does not hold whole");
  if (auto it = covering(offset); it != runs_.end()) {
    // Split the run around the entry: what stays before and after keeps its state.
    const std::uint32_t first = it->first;
    const Run run = it->second;
    runs_.erase(it);
    if (offset > first) runs_.emplace(first, Run{run.ppn, offset - first, run.dirty});
    const std::uint32_t end = first + run.length;
    if (offset + 1 < end) runs_.emplace(offset + 1, Run{run_entry(run.ppn, offset + 1 - first), end - offset - 1, run.dirty});
  }
  // A dirty run ending right before that the new mapping continues grows by one (a sequential
  // write leaves one run, as in the entry cache).
  auto next = runs_.upper_bound(offset);
  if (next != runs_.begin()) {
    Run& previous = std::prev(next)->second;
    if (previous.dirty && std::prev(next)->first + previous.length == offset &&
        continues(run_entry(previous.ppn, previous.length - 1), ppn)) {
      ++previous.length;
      return;
    }
  }
  runs_.emplace(offset, Run{ppn, 1, true});
}

void GroupMap::overlay(std::span<std::uint32_t> page) const {
  if (whole_) {
    std::copy(entries_.begin(), entries_.end(), page.begin());
    return;
  }
  for (const auto& [first, run] : runs_) {
    if (!run.dirty) continue;
    for (std::uint32_t i = 0; i < run.length; ++i) page[first + i] = run_entry(run.ppn, i);
  }
}

void GroupMap::mark_clean() {
  for (auto& [first, run] : runs_) run.dirty = false;
}

std::uint32_t GroupMap::runs_of(std::span<const std::uint32_t> page) const {
  std::uint32_t runs = page.empty() ? 0 : 1;
  for (std::size_t i = 1; i < page.size(); ++i) runs += continues(page[i - 1], page[i]) ? 0 : 1;
  return runs;
}

std::uint64_t GroupMap::bytes() const {
  if (whole_) {
    return shape_->compact ? std::min(shape_->page_bytes, whole_runs_ * shape_->entry_bytes) : shape_->page_bytes;
  }
  return runs_.size() * shape_->entry_bytes;
}

void GroupMap::clear() {
  whole_ = false;
  whole_runs_ = 0;
  runs_.clear();
}

}  // namespace flashdir::ram
