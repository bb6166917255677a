// The checks after a power cut: what fsck's FTL check (src/check) says of the chip, and
// whether every LPN of a reopened FTL reads a value the durability contract allows.
#pragma once

#include <cstdint>
#include <string>

#include "flashdir/ftl/ftl.h"
#include "workload_driver.h"

namespace flashdir::testing {

// Reads every LPN; returns the first value the oracle does not allow given the durable
// watermark at the cut (empty if none), and settles the oracle to what was read. On a
// metadata-only chip, which keeps no host data, the version is the one the OOB record of the
// LPN's page carries.
std::string verify_and_settle(Ftl& ftl, Oracle& oracle, std::uint64_t durable);

// fsck's FTL check of the chip, read-only: its errors one per line, empty if it finds none.
std::string fsck_errors(NandChip& chip, const FtlOptions& options);

}  // namespace flashdir::testing
