// LUFUW's sliding window (papers/lufuw.txt, section II; doc/cache.md): the metadata pages
// with unfinished writes, oldest first, as a TCP window: a page enters at the back when a
// write registers on it and leaves only from the front, once none of its writes is
// unfinished. A page that already has unfinished writes keeps its place (the window holds
// distinct pages, at most kMetadataWindowCapacity of them).
//
// Why the front-only rule matters: the window written with the newest metadata page is the
// only witness of unfinished writes after a power cut, so a page may be missing from it only
// if every write registered on it before that page was written had finished.
//
// Single-threaded (the metadata store's caller serialises).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace flashdir::cache::meta {

class UnfinishedWindow {
 public:
  explicit UnfinishedWindow(std::size_t capacity) : capacity_(capacity) {}

  // Whether registering a write on `page` needs room the window does not have.
  bool needs_room_for(std::uint32_t page) const { return !contains(page) && entries_.size() >= capacity_; }
  // A write of slot `slot` registers on `page`. Precondition: !needs_room_for(page).
  void add(std::uint32_t page, std::uint32_t slot);
  // Slot `slot`'s write on `page` finished (its data is durable) or no longer matters.
  // Returns the pages that left the window from its front.
  std::vector<std::uint32_t> finish(std::uint32_t page, std::uint32_t slot);

  bool contains(std::uint32_t page) const;
  // The front page and its unfinished slots (the write a full window forces), if any.
  std::optional<std::uint32_t> oldest_page() const;
  const std::vector<std::uint32_t>& unfinished_slots(std::uint32_t page) const;
  // The pages, oldest first, as a metadata page header records them.
  std::vector<std::uint32_t> pages() const;
  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    std::uint32_t page;
    std::vector<std::uint32_t> slots;  // unfinished writes registered on the page
  };
  Entry* find(std::uint32_t page);
  const Entry* find(std::uint32_t page) const;

  std::size_t capacity_;
  std::deque<Entry> entries_;  // at most capacity_: linear search is cheaper than an index
};

}  // namespace flashdir::cache::meta
