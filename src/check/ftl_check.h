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

// Adds what it finds to `report`. Returns true if the mapping needs a rebuild from a scan.
bool check_ftl(NandChip& chip, const format::Superblock& superblock, const CheckOptions& options, CheckReport& report);

// Rebuilds the FTL from a full scan and writes a fresh checkpoint (fsck -y).
Status rebuild_ftl(NandChip& chip, const format::Superblock& superblock);

}  // namespace flashdir
