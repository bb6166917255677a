// How large a chip a trace needs. The logical space must hold the trace's compacted span (the
// logical pages the replay addresses: the chunks it touches, compaction.h) at the wanted
// utilization (span / logical space); the chip is the smallest whose FTL exports that many
// logical pages, given the geometry and the over-provisioning (the FTL also keeps blocks for
// checkpoints, frontiers, the GC reserve and translation pages). The span is larger than the
// pages the trace touches, by up to a chunk per run of touched pages: a smaller chunk brings
// it closer (doc/sim.md, "Chip size").
#pragma once

#include <cstdint>

#include "flashdir/geometry.h"
#include "flashdir/sim/compaction.h"
#include "flashdir/status.h"

namespace flashdir::sim {

// No automatically sized chip is smaller: tiny traces still get room for GC to work in.
inline constexpr std::uint64_t kMinAutoBlocks = 64;

// ceil(footprint_pages / utilization), utilization in (0, 1].
std::uint64_t logical_pages_needed(std::uint64_t footprint_pages, double utilization);

// The smallest block count, at least kMinAutoBlocks, for which Ftl::logical_pages_for(shape
// with that many blocks, overprovision_permille) >= logical_pages. `shape`'s block_count is
// ignored. Fails if no chip addressable by the FTL (32-bit physical page numbers) is enough.
Result<std::uint64_t> blocks_for_logical_pages(const Geometry& shape, std::uint16_t overprovision_permille,
                                               std::uint64_t logical_pages);

// Ok when a logical space of `logical_pages` on `chip` holds the trace's compacted span; else
// invalid_argument quoting the span, its chunks and the pages the trace touches.
Status check_span_fits(const Geometry& chip, std::uint64_t logical_pages, const CompactTrace& trace);

}  // namespace flashdir::sim
