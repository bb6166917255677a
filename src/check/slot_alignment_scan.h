// Which slot layout a cache's chip shows, for a superblock rebuilt without any copy of the old
// one (doc/cache.md "Slots and replacement", doc/fsck.md).
#pragma once

#include <cstdint>
#include <filesystem>

#include "flashdir/format.h"
#include "flashdir/status.h"

namespace flashdir {

// A cache formatted before the slot alignment filled slot 0 first (the CLOCK hand starts
// there), at the LPN right after its metadata pages, which the aligned layout never writes: a
// data page recorded for any LPN between the packed layout's slot 0 and the aligned one's is
// the packed layout's. Without one (no such page ever programmed, or all erased since) the
// aligned layout, which a cache formatted now has.
Result<format::SlotAlignment> slot_alignment_on_chip(const std::filesystem::path& image,
                                                     std::uint16_t overprovision_permille);

}  // namespace flashdir
