// What happened between two snapshots of an FTL's statistics: the measured part of a run,
// without the format, prefill and aging that came before it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flashdir/ftl/stats.h"
#include "flashdir/nand/chip.h"

namespace flashdir::sim {

// Counters (requests, pages, chip operations and busy time, GC, mapping, RAM traffic and time,
// checkpoints, service time, the summed RAM split) are `after - before`; gauges
// (erase_count_min/max/mean, ram_budget/mapping/buffer_bytes and their peaks, logical_pages,
// free_blocks) are `after`'s values: a spread of erases over the interval needs the per-block
// counts (erase_spread below). `before` must be an earlier snapshot of the same FTL. A counter
// added to FtlStats must be added to the list in stats_delta.cc.
FtlStats stats_delta(const FtlStats& before, const FtlStats& after);
// Adds the counters of `delta` (a stats_delta) to `total` and takes its gauges: the measured
// part of a run made of several FTL sessions (torture mode reopens the FTL after every cut).
void stats_add(FtlStats& total, const FtlStats& delta);

struct EraseSpread {
  std::uint32_t min = 0;
  double mean = 0;
  std::uint32_t max = 0;
  bool operator==(const EraseSpread&) const = default;
};

// Every block's erase count, for a later erase_spread.
std::vector<std::uint32_t> erase_counts(const NandChip& chip);
// Min / mean / max over blocks of the erases since `before` (erase_counts of the same chip
// taken earlier), or of the whole life of the chip when `before` is empty.
EraseSpread erase_spread(const NandChip& chip, std::span<const std::uint32_t> before = {});

}  // namespace flashdir::sim
