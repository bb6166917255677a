// Internal to src/check: the chip image against its superblock, before anything drives the
// chip (doc/fsck.md "What -y rebuilds"):
//   - the header decodes: -y rewrites a damaged one from the superblock (uuid and geometry are
//     all it holds, and the superblock has both);
//   - it names the superblock's cache and geometry (an image of another cache is an
//     operational error: fsck does not choose between two caches);
//   - the file has the size the geometry needs: -y cuts a grown one (no page lives past that
//     size) and extends a truncated one (the pages cut off read as zeros and fail verification;
//     the FTL mapping is rebuilt without them);
//   - every block table entry agrees with its block's OOB records: -y rebuilds the entries
//     that do not from the records, and the FTL mapping from a scan.
// Under -n a finding leaves the chip unchecked: the checks after it would report the noise
// the damage makes.
#pragma once

#include "check_state.h"
#include "flashdir/cache_dir.h"
#include "flashdir/check.h"

namespace flashdir {

// Precondition: report.superblock was read or rebuilt.
void check_image(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report, CheckState& state);

}  // namespace flashdir
