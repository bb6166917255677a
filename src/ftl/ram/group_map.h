// What a caching group of the tree policies holds of its translation page (doc/ram.md): nothing,
// the whole page, or (in `stack`) runs of it.
//
// Whole: every entry of the page, in an array. TreeFTL (`tree`) charges it a page; `stack`
// charges the cheaper of the page and its runs in CFTL's compact form (an entry per run of
// consecutive mappings: LPN, PPN and the consecutive field), so a page written sequentially
// costs a few entries, not 4 KiB. (The simulated device would keep such a page as its runs;
// the array is the simulator's convenience, and the charge is what counts.)
//
// Partial (`stack` only): runs read from the page around the LPNs looked up (CFTL's
// consecutive field, extended both ways since the whole page is at hand), and runs set without
// the page being read (GC's relocations, batched per page as in the entry caches); each run is
// charged an entry. Runs set overlay the page on flash when it is loaded or written back. A
// random lookup under small RAM then costs an entry, not a page.
//
// With `consecutive` off (DFTL's entries) every run is one entry long.
//
// Not thread-safe.
#pragma once

#include <absl/container/btree_map.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace flashdir::ram {

struct GroupMapShape {
  std::uint32_t entries = 0;      // LPNs per translation page
  std::uint64_t page_bytes = 0;   // what a whole page costs in TreeFTL's form
  std::uint64_t entry_bytes = 0;  // what a run costs in the compact form
  bool consecutive = false;       // runs may be longer than one entry (CFTL)
  bool compact = false;           // `stack`: partial pages, and whole ones charged by their runs
};

class GroupMap {
 public:
  explicit GroupMap(const GroupMapShape& shape) : shape_(&shape) {}

  bool empty() const { return !whole_ && runs_.empty(); }
  bool whole() const { return whole_; }

  // The PPN of the entry at `offset`, if held.
  std::optional<std::uint32_t> find(std::uint32_t offset) const;

  // Takes the whole page: `page` is its content on flash, under the runs held so far (newer).
  void load_whole(std::span<const std::uint32_t> page);
  // Takes from `page` (the content on flash) only the run around `offset`, which is not held,
  // cut short where held runs begin or end. Compact form only.
  void load_run(std::span<const std::uint32_t> page, std::uint32_t offset);
  // Records offset -> ppn. The page must be whole, or the form compact.
  void set(std::uint32_t offset, std::uint32_t ppn);

  // Writes what the page on flash lacks onto `page`: every entry if whole, the dirty runs if
  // partial; the caller is writing it back.
  void overlay(std::span<std::uint32_t> page) const;
  // Every run clean: the page was written back.
  void mark_clean();
  // The whole page's entries (whole only).
  std::span<const std::uint32_t> entries() const { return entries_; }

  // How many runs `page` has in CFTL's form (each entry alone without `consecutive`).
  std::uint32_t runs_of(std::span<const std::uint32_t> page) const;
  // What the group's translation state costs in device RAM.
  std::uint64_t bytes() const;

  // Holds nothing again (keeps its storage for the next page).
  void clear();

 private:
  struct Run {
    std::uint32_t ppn = 0;  // of its first entry; entry i maps to run_entry(ppn, i)
    std::uint32_t length = 1;
    bool dirty = false;
  };

  // Whether `next` continues the run that `previous` (the entry before it) is part of.
  bool continues(std::uint32_t previous, std::uint32_t next) const;
  // Whether a run boundary lies between the whole page's entries `offset` and `offset + 1`.
  bool boundary_after(std::uint32_t offset) const;
  // The held run covering `offset`, or runs_.end().
  absl::btree_map<std::uint32_t, Run>::const_iterator covering(std::uint32_t offset) const;

  const GroupMapShape* shape_;
  bool whole_ = false;
  std::vector<std::uint32_t> entries_;  // whole: the page
  std::uint32_t whole_runs_ = 0;        // whole: its runs in CFTL's form
  absl::btree_map<std::uint32_t, Run> runs_;  // partial: by first offset
};

}  // namespace flashdir::ram
