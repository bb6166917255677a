// A cache directory on the host: where its superblock, chip image and catalog live, how one
// is formatted (mkfs) and how its superblock file is read and rewritten.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "flashdir/cache_lock.h"
#include "flashdir/format.h"
#include "flashdir/ftl/options.h"
#include "flashdir/geometry.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/status.h"
#include "flashdir/trusted_dir.h"

namespace flashdir {

// The directory in a cache where a restart keeps dirty pages it could not prove belong to the
// file now at their recorded place (doc/cache.md "Restart after a cut").
inline constexpr const char* kLostFoundDirName = "lost+found";
// The daemon's metadata cache kept across restarts (a RocksDB database; doc/daemon.md
// "Metadata cache"). Only a hint: fsck leaves it alone, and removing it loses nothing.
inline constexpr const char* kNameCacheDirName = "names";
// The daemon's log in a cache directory (its stderr once it runs in the background).
inline constexpr const char* kLogFileName = "daemon.log";

struct CacheDirPaths {
  std::filesystem::path dir;
  std::filesystem::path superblock;  // DIR/superblock
  std::filesystem::path image;       // DIR/nand.img
  std::filesystem::path catalog;     // DIR/catalog
  std::filesystem::path restart_image;  // DIR/restart.img, saved by a clean close (cache/restart_image.h)

  explicit CacheDirPaths(const std::filesystem::path& cache_dir);
};

// The smallest chip a cache may have: the FTL keeps write frontiers, a GC reserve and
// checkpoint blocks beside the data, and that takes a few dozen blocks whatever the size.
inline constexpr std::uint64_t kMinimumCacheBlocks = 32;
// Above half the chip kept spare, a cache gives away more than it keeps for little less wear.
inline constexpr std::uint16_t kMaxOverprovisionPermille = 500;
// The spare share a cache gets unless told, where its chip needs no more for GC
// (Ftl::minimum_overprovision_permille: a chip of fewer than 58 usable blocks does).
inline constexpr std::uint16_t kDefaultOverprovisionPermille = 70;

// The device RAM a cache gets unless told: a sixteenth of its capacity, from 4 MiB to 64 MiB.
// Its mapping needs 4 bytes a 4 KiB page (1/1024 of the capacity) to hold every translation
// entry, so the rest is write buffer; past 1 GiB the mapping cache works from a part of the map,
// as an SSD's does. (A flat 64 MiB gave a 32 MiB cache twice its size in RAM.)
std::uint64_t default_ram_budget_bytes(std::uint64_t capacity_bytes);

struct FormatOptions {
  std::uint64_t capacity_bytes = 0;
  std::uint32_t page_size_bytes = Geometry::kDefaultPageSizeBytes;
  std::uint32_t oob_size_bytes = Geometry::kDefaultOobSizeBytes;
  std::uint32_t pages_per_block = Geometry::kDefaultPagesPerBlock;
  LatencyProfile latency = LatencyProfile::of(LatencyPreset::slc);
  format::MappingScheme mapping = format::MappingScheme::cftl;
  format::GcPolicy gc = format::GcPolicy::dual_greedy;
  // Share of the data area kept spare; unset: kDefaultOverprovisionPermille or the chip's
  // minimum, whichever is more.
  std::optional<std::uint16_t> overprovision_permille;
  // Device RAM (mapping cache, write buffer); default_ram_budget_bytes(capacity_bytes) if unset.
  std::optional<std::uint64_t> ram_budget_bytes;
  format::RamPolicy ram_policy = format::RamPolicy::stack;
  std::uint8_t static_mapping_percent = 50;      // with the static RAM policy
  bool force = false;  // replace an existing cache or a partial one (only flashdir's own entries are removed)
  ImageSpace image_space = ImageSpace::reserved;  // mkfs --sparse: the image takes space as it is written

  // The chip these options describe, or why they are refused: a bad page, OOB or block size, a
  // size that is not a whole number of blocks or holds fewer than kMinimumCacheBlocks, or
  // over-provisioning above kMaxOverprovisionPermille or below what the chip needs for GC to
  // always make room. Messages name the mkfs.flashdir option that sets the bad field, since that
  // is where a person fixes it.
  Result<Geometry> checked_geometry() const;
  // The over-provisioning a cache on `geometry` (from checked_geometry) gets.
  std::uint16_t overprovision_for(const Geometry& geometry) const;
};

// Formats the cache directory `dir`, whose lock the caller holds: catalog, image with a freshly
// formatted FTL, superblock, written in that order so that a superblock exists only for a
// complete cache; each 0600 (the catalog directory 0700) whatever the umask. `dir` may hold
// nothing but the daemon's files and, with `force`, a cache or the part of one an interrupted
// first start leaves (an image or catalog beside the lock of that start, no superblock): `force`
// replaces a cache and refuses anything else, a user's own files above all. Refuses, each with a one-line reason: options
// checked_geometry() refuses, a directory holding anything else, a cache without `force`, and a
// directory that cannot be written.
Result<format::Superblock> format_locked_cache_dir(const TrustedDir& dir, const CacheLock& lock,
                                                   const FormatOptions& options);

struct FormattedCacheDir {
  format::Superblock superblock;
  std::vector<std::string> warnings;  // the trust check's (a mode made private)
};

// mkfs.flashdir's work: opens `dir` as a trusted directory (trusted_dir.h; created if its parent
// exists), takes its lock (a cache in use is refused) and formats it. A failure leaves nothing
// behind that it created.
Result<FormattedCacheDir> format_cache_dir(const std::filesystem::path& dir, const FormatOptions& options);

// The FTL options a cache was formatted with: mapping scheme, GC policy, over-provisioning and
// its device RAM.
FtlOptions ftl_options(const format::Superblock& superblock);

// Whether the chip image's header (at `image`) belongs to `superblock`: same uuid and the same
// geometry, field by field. The message names the first field that differs. Every tool checks
// this before it changes anything in the cache.
Status check_image_matches(const std::filesystem::path& image, const format::ImageHeader& header,
                           const format::Superblock& superblock);

// fsck -y's repairs of a chip image whose superblock is sound (doc/fsck.md). Each syncs the
// image before it returns.
//
// Writes the header `superblock` describes (its uuid, geometry and the layout that follows)
// over a damaged one; nothing else in the file changes.
Status rewrite_image_header(const std::filesystem::path& image, const format::Superblock& superblock);
// The size of the image file (not following a link).
Result<std::uint64_t> image_file_size(const std::filesystem::path& image);
// Cuts or extends the image to the size `geometry` needs: bytes past it hold no page, and an
// extension reads as zeros (pages whose bytes were cut off fail verification).
Status resize_image(const std::filesystem::path& image, const Geometry& geometry);

// A block table entry the OOB area contradicts: a page count above the block's size, or fewer
// pages than hold OOB records (the table is written before its pages and an erase clears the
// records before the entry, so neither happens but by damage).
struct BlockTableFault {
  std::uint64_t block = 0;
  format::BlockTableEntry recorded;
  format::BlockTableEntry rebuilt;  // next page: one past the last page whose OOB record decodes
};
// Compares every entry of the block table of `image` (whose header is `header` and whose size
// is the one its geometry needs) with the OOB records of its block.
Result<std::vector<BlockTableFault>> find_block_table_faults(const std::filesystem::path& image,
                                                            const format::ImageHeader& header);
Status rewrite_block_table(const std::filesystem::path& image, const format::ImageHeader& header,
                           const std::vector<BlockTableFault>& faults);

// The superblock file: two slots; see format.h.
struct SuperblockFile {
  format::Superblock superblock;       // the valid slot with the highest sequence
  int slot = 0;                        // where it was found
  std::vector<std::string> damaged;    // one message per invalid slot (fsck reports these)
};

// Fails with corruption (naming both slots) if neither slot is valid.
Result<SuperblockFile> read_superblock_file(const std::filesystem::path& path);
// Writes `superblock` with its sequence bumped into the slot that does not hold the newest
// copy, then syncs; `superblock.sequence` is updated.
Status update_superblock_file(const std::filesystem::path& path, format::Superblock& superblock);
// Writes both slots (mkfs, and fsck repairing a damaged slot) and syncs.
Status write_superblock_file(const std::filesystem::path& path, const format::Superblock& superblock);

}  // namespace flashdir
