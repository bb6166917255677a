// Internal to src/check: the FTL's checks (doc/ftl.md, "Recovery"): rebuild the mapping twice,
// from the newest checkpoint with roll-forward and from a scan of every page, and compare; one
// physical page per LPN, every mapped page holding its LPN, valid counts per block (equal to
// a clean checkpoint's; after an unclean shutdown, no page the checkpoint counted invalid
// valid again).
#pragma once

#include "flashdir/check.h"
#include "flashdir/format.h"
#include "flashdir/nand/chip.h"

namespace flashdir {

// What fsck -y may do about the FTL after check_ftl.
enum class FtlRepair {
  none_needed,  // the mapping is sound (damaged pages may still call for a rebuild)
  rebuild,      // the mapping needs a rebuild from a scan
  refused,      // a rebuild would be wrong (the superblock and the checkpoint disagree on the layout)
};

// Adds what it finds to `report`.
FtlRepair check_ftl(NandChip& chip, const format::Superblock& superblock, const CheckOptions& options,
                    CheckReport& report);

// Rebuilds the FTL from a full scan, collects every block holding a damaged page, and writes a
// fresh checkpoint (fsck -y). The lost LPNs go to `lost` (at most `limit` listed, all counted).
Status rebuild_ftl(NandChip& chip, const format::Superblock& superblock, std::size_t limit,
                   std::vector<std::string>& lost);

}  // namespace flashdir
