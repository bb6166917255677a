// Buffered drops waiting for their metadata page's next write: the slot's entry is cleared in
// RAM only, the chip still names the file page, so the slot's data must stay (no trim) until
// the page is written — and that write must come before anything makes the old bytes stale:
// a new copy of the file page cached elsewhere, a write to the backing file, a changed file.
// Indexed by page (to trim once written) and by file page (to find what a write makes stale).
//
// Single-threaded (the metadata store's).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace flashdir::cache::meta {

struct PendingDrop {
  std::uint32_t slot = 0;
  std::uint64_t file_id = 0;
  std::uint64_t page_no = 0;
};

class PendingDrops {
 public:
  void add(std::uint32_t metadata_page, const PendingDrop& drop);
  // The slot is written again before its drop reached the chip: its data is replaced, no trim.
  void cancel(std::uint32_t metadata_page, std::uint32_t slot);
  // The page was written: its drops are on the chip; they leave.
  std::vector<PendingDrop> take(std::uint32_t metadata_page);

  // The metadata page of a pending drop of file page (file_id, page_no), if any.
  std::optional<std::uint32_t> page_holding(std::uint64_t file_id, std::uint64_t page_no) const;
  std::vector<std::uint32_t> pages_of_file(std::uint64_t file_id) const;
  std::vector<std::uint32_t> all_pages() const;
  std::size_t size() const { return count_; }
  // RAM held, measured from the containers (bounded: the store caps the pending drops).
  std::size_t ram_bytes() const;

 private:
  absl::flat_hash_map<std::uint32_t, std::vector<PendingDrop>> by_page_;
  absl::flat_hash_map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t> page_by_key_;
  std::size_t count_ = 0;
};

}  // namespace flashdir::cache::meta
