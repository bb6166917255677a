// A cache directory's chip reached around its FTL, for the tool tests to write through, recover,
// inspect and damage.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flashdir/cache_dir.h"
#include "flashdir/clock.h"
#include "flashdir/format.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/simulated_chip.h"

namespace flashdir::testing {

// Flips one bit of the byte at `offset` of a file.
void flip_byte(const std::filesystem::path& path, std::uint64_t offset);

// A cache's chip opened directly, without its FTL, for a test to inspect or damage.
struct CacheChip {
  explicit CacheChip(const std::filesystem::path& dir, ImageAccess access = ImageAccess::read_only);
  std::shared_ptr<PageStore> store;
  SimClock clock;
  SimulatedChip chip;
};

inline constexpr std::uint64_t kSmallRamBytes = 16384;  // translation pages get written

// The cache's FTL options, with a device RAM of `ram_budget_bytes`.
FtlOptions options_of(const std::filesystem::path& dir, std::uint64_t ram_budget_bytes);
// Writes `requests` random runs through the FTL of the cache, with a power cut at `cut_at`.
void write_through_ftl(const std::filesystem::path& dir, std::uint64_t requests, std::uint64_t cut_at);
// Opens the FTL after a power cut, which recovers, and closes it cleanly.
void recover_and_close(const std::filesystem::path& dir);
// The verified OOB record of every programmed page, by page number.
std::map<std::uint64_t, format::OobRecord> records_of(const std::filesystem::path& dir);
// A data page that an older write left behind (nothing refers to it) and that is not the last
// programmed page of its block (no power cut tears it).
std::uint64_t stale_page_inside_a_block(const std::filesystem::path& dir);
// Damages the OOB record of `page` (its logical number).
void damage_record(const std::filesystem::path& dir, std::uint64_t page);
// Cuts the power during an erase of `block` so that at least two of its pages are left noise.
void interrupt_erase(const std::filesystem::path& dir, BlockNumber block);
// The erased blocks of a cache, highest first: pool blocks, away from the checkpoint slots.
std::vector<BlockNumber> erased_blocks(const std::filesystem::path& dir);

}  // namespace flashdir::testing
