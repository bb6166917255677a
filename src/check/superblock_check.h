// Internal to src/check: the superblock's two slots (doc/format.md). One damaged slot is
// rewritten from the other. With both damaged the superblock is rebuilt from what is left
// (doc/fsck.md "What -y rebuilds"):
//   - the catalog's copy, when it is this chip's (the image header's uuid and geometry, or,
//     the header damaged too, an image of the size the copy's geometry needs), its file id
//     limit raised to the catalog's next file id;
//   - otherwise the image header's uuid and geometry, the over-provisioning of the newest FTL
//     checkpoint (the one choice the chip's layout depends on) and mkfs's defaults for the
//     rest (latency, mapping, GC and RAM: how the FTL runs, not what it wrote).
// -n checks the rest of the cache against the rebuilt superblock without writing it.
#pragma once

#include "flashdir/cache_dir.h"
#include "flashdir/check.h"

namespace flashdir {

// Sets report.superblock, or report.fatal when there is no superblock to check the cache with.
void check_superblock(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report);

}  // namespace flashdir
