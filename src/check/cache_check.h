// Internal to src/check: the cache engine's checks (doc/fsck.md). fsck runs the engine's own
// restart — FTL recovery, then cache::MetadataStore::open, which applies the usability rule —
// on a copy-on-write overlay of the image (-n), or on the image itself (-y), and compares the
// slots it keeps with the catalog:
//   - every metadata page decodes and belongs where it is (XXH3, window of at most 63 page
//     numbers below the metadata page count, page number, entry count); one that does not is an
//     error, and its slots are dropped;
//   - entries the usability rule refuses (writes in flight at a power cut) and older copies of
//     a page cached twice are counted: the next open drops them, so they are notes;
//   - the slots are sorted as the engine's restart sorts them (slot_sort.h): orphans (a file
//     unlinked while open: clean ones a note, dirty ones an error), records the catalog lost
//     (ids at or past its next file id: an error), dirty slots whose data cannot be read (an
//     error: LOST);
//   - dirty slots of catalog files are written back at the engine's next open: counted, and
//     kept by -y (they hold the only copy); with the backing directory known, a dirty file
//     whose backing file is gone is an error -y cannot fix.
// -y drops what the restart drops, saves in lost+found the dirty pages no catalog file names
// and drops them with the orphans and the damaged dirty pages, through the same calls as the
// engine (MetadataStore::open, cache::LostFound, MetadataStore::drop), then closes the store
// and the FTL cleanly. An unusable catalog (check_catalog) names no file: every slot goes, and
// the catalog is replaced with an empty one once they have.
#pragma once

#include "check_state.h"
#include "flashdir/cache_dir.h"
#include "flashdir/check.h"

namespace flashdir {

// Adds what it finds to `report` (report.cache, notes, errors, repairs). Precondition: the
// superblock was read (report.have_superblock) and the image matches it.
void check_cache(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report, CheckState& state);

}  // namespace flashdir
