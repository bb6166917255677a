// Internal to src/check: the page-by-page scan of a chip.
#pragma once

#include <functional>
#include <string>

#include "damage_rule.h"
#include "flashdir/check.h"
#include "flashdir/nand/chip.h"

namespace flashdir {

// Reads the OOB (and, where the chip keeps data, the data) of every programmed page and
// verifies the OOB record checksum and the data hash. Each block with damaged pages is passed
// to `damaged`, in block order; a chip read error stops the scan and is returned.
Status scan_chip(NandChip& chip, ChipScanSummary& summary, const std::function<void(BlockDamage)>& damaged,
                 const std::function<void(std::uint64_t, std::uint64_t)>& progress);

}  // namespace flashdir
