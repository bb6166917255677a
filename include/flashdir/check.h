// The checks behind fsck.flashdir, as a library so tests and (later) the daemon's start-up
// run the very same code. Layers add their own checks here as they arrive.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "flashdir/format.h"

namespace flashdir {

struct CheckOptions {
  bool repair = false;  // fix what can be fixed (fsck -y); otherwise open everything read-only
  // Called as the chip scan advances; `done` and `total` count blocks.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  std::size_t max_listed_pages = 20;  // damaged pages (and other findings) listed one by one before summarising
  // The backing directory the cache stands for, to check that the catalog's files exist (and
  // that files with dirty pages are still the files they were; one that is not a directory is an
  // operational error); empty: the one the catalog records, if any.
  std::filesystem::path backing_dir;
};

struct ChipScanSummary {
  std::uint64_t blocks = 0;
  std::uint64_t erased_blocks = 0;
  std::uint64_t full_blocks = 0;
  std::uint64_t programmed_pages = 0;
  std::uint64_t pages_by_kind[4] = {};  // indexed by format::PageKind
  std::uint64_t damaged_pages = 0;      // bad OOB record or data hash
  std::uint32_t erase_count_min = 0;
  std::uint32_t erase_count_max = 0;
  double erase_count_mean = 0;
};

struct FtlCheckSummary {
  bool checked = false;
  std::uint64_t checkpoint_generation = 0;
  bool checkpoint_clean = false;        // no change on the chip since the checkpoint
  std::uint64_t logical_pages = 0;
  std::uint64_t mapped_pages = 0;       // LPNs holding data
  std::uint64_t rolled_forward_pages = 0;  // pages programmed after the checkpoint
  std::uint64_t mismatches = 0;         // LPNs where checkpoint + roll-forward and a full scan disagree
  std::uint64_t lost_lpns = 0;          // LPNs whose data is lost (they read as errors until rewritten)
};

// The cache engine's slot metadata (doc/fsck.md), as the engine's restart would find it.
struct CacheCheckSummary {
  bool checked = false;                 // the engine has used the cache and its metadata could be read
  std::string scheme;                   // lufuw, write-update or update-write-update
  std::uint64_t slots = 0;
  std::uint64_t metadata_pages = 0;
  std::uint64_t damaged_metadata_pages = 0;  // unreadable, or refused by the codec or the layout
  std::uint64_t newest_sequence = 0;    // of the newest metadata page that decodes
  std::uint64_t newest_page = 0;
  std::uint64_t window_pages = 0;       // pages with unfinished writes in its window
  bool clean_shutdown = false;          // the newest page carries the clean mark
  std::uint64_t usable_slots = 0;       // pass the usability rule, name a catalog file and read
  std::uint64_t dirty_slots = 0;        // of those, dirty: written back at the engine's next open
  std::uint64_t dirty_files = 0;
  std::uint64_t dropped_slots = 0;      // fail the usability rule, or older copies of a page cached twice
  std::uint64_t duplicate_slots = 0;    // of those, older copies
  std::uint64_t orphan_slots = 0;       // pass it but name a file the catalog does not know, below its next id
  std::uint64_t orphan_dirty_slots = 0;  // of those, dirty: data with nowhere to go but lost+found
  std::uint64_t lost_record_files = 0;  // ids at or past the catalog's next one: records it lost
  std::uint64_t lost_record_slots = 0;  // their slots
  std::uint64_t lost_record_dirty_slots = 0;  // of those, dirty
  std::uint64_t damaged_dirty_slots = 0;  // dirty slots whose data cannot be read: lost
  bool backing_checked = false;         // the backing directory was known and reachable
  std::uint64_t missing_backing_files = 0;  // catalog files whose backing file is gone
};

struct CheckReport {
  std::string fatal;                  // why the check could not go on (operational error)
  std::vector<std::string> errors;    // problems left as they are
  std::vector<std::string> repairs;   // problems fixed (only with CheckOptions::repair)
  std::vector<std::string> notes;     // facts worth printing
  bool have_superblock = false;
  format::Superblock superblock;
  ChipScanSummary chip;
  FtlCheckSummary ftl;
  CacheCheckSummary cache;

  // fsck(8): 0 clean, 1 errors corrected, 4 errors left uncorrected, 8 operational error;
  // the codes add up.
  int exit_code() const;
};

CheckReport check_cache_dir(const std::filesystem::path& dir, const CheckOptions& options);

}  // namespace flashdir
