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
  std::size_t max_listed_pages = 20;  // damaged pages listed one by one before summarising
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

struct CheckReport {
  std::string fatal;                  // why the check could not go on (operational error)
  std::vector<std::string> errors;    // problems left as they are
  std::vector<std::string> repairs;   // problems fixed (only with CheckOptions::repair)
  std::vector<std::string> notes;     // facts worth printing
  bool have_superblock = false;
  format::Superblock superblock;
  ChipScanSummary chip;
  FtlCheckSummary ftl;

  // fsck(8): 0 clean, 1 errors corrected, 4 errors left uncorrected, 8 operational error;
  // the codes add up.
  int exit_code() const;
};

CheckReport check_cache_dir(const std::filesystem::path& dir, const CheckOptions& options);

}  // namespace flashdir
