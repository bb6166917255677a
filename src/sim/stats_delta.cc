#include "flashdir/sim/stats_delta.h"

#include <algorithm>
#include <cassert>

namespace flashdir::sim {

namespace {

// Every counter of FtlStats (the rest are gauges).
constexpr std::uint64_t FtlStats::*kCounters[] = {
    &FtlStats::read_requests,
    &FtlStats::write_requests,
    &FtlStats::trim_requests,
    &FtlStats::read_pages,
    &FtlStats::write_pages,
    &FtlStats::trim_pages,
    &FtlStats::hot_write_pages,
    &FtlStats::chip_page_reads,
    &FtlStats::chip_page_programs,
    &FtlStats::chip_block_erases,
    &FtlStats::chip_busy_ns,
    &FtlStats::gc_runs,
    &FtlStats::gc_data_copies,
    &FtlStats::gc_translation_copies,
    &FtlStats::translation_page_reads,
    &FtlStats::translation_page_writes,
    &FtlStats::gc_translation_page_reads,
    &FtlStats::gc_translation_page_writes,
    &FtlStats::mapping_lookups,
    &FtlStats::mapping_hits,
    &FtlStats::mapping_read_lookups,
    &FtlStats::mapping_read_hits,
    &FtlStats::mapping_write_lookups,
    &FtlStats::mapping_write_hits,
    &FtlStats::cbmt_lookups,
    &FtlStats::cbmt_hits,
    &FtlStats::conversions_to_block,
    &FtlStats::conversions_to_page,
    &FtlStats::consolidation_copies,
    &FtlStats::buffer_read_lookups,
    &FtlStats::buffer_read_hits,
    &FtlStats::buffer_write_lookups,
    &FtlStats::buffer_write_hits,
    &FtlStats::bypass_write_pages,
    &FtlStats::evicted_data_pages,
    &FtlStats::evicted_mapping_entries,
    &FtlStats::evicted_translation_pages,
    &FtlStats::ram_page_ops,
    &FtlStats::ram_ns,
    &FtlStats::aps_repartitions,
    &FtlStats::checkpoints,
    &FtlStats::checkpoint_pages,
    &FtlStats::service_ns};

}  // namespace

FtlStats stats_delta(const FtlStats& before, const FtlStats& after) {
  FtlStats d = after;  // the gauges
  for (auto field : kCounters) {
    assert(after.*field >= before.*field && "stats_delta: `before` is not an earlier snapshot");
    d.*field = after.*field - before.*field;
  }
  d.ram_mapping_share_sum = after.ram_mapping_share_sum - before.ram_mapping_share_sum;
  return d;
}

void stats_add(FtlStats& total, const FtlStats& delta) {
  const FtlStats sum = total;
  total = delta;  // the gauges
  for (auto field : kCounters) total.*field = sum.*field + delta.*field;
  total.ram_mapping_share_sum = sum.ram_mapping_share_sum + delta.ram_mapping_share_sum;
}

std::vector<std::uint32_t> erase_counts(const NandChip& chip) {
  const std::uint64_t blocks = chip.geometry().block_count;
  std::vector<std::uint32_t> counts(blocks);
  for (std::uint64_t b = 0; b < blocks; ++b) counts[b] = chip.erase_count(BlockNumber(b));
  return counts;
}

EraseSpread erase_spread(const NandChip& chip, std::span<const std::uint32_t> before) {
  const std::uint64_t blocks = chip.geometry().block_count;
  assert((before.empty() || before.size() == blocks) && "erase_spread: `before` is of another chip");
  EraseSpread spread;
  if (blocks == 0) return spread;
  spread.min = UINT32_MAX;
  std::uint64_t total = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint32_t erases = chip.erase_count(BlockNumber(b)) - (before.empty() ? 0 : before[b]);
    spread.min = std::min(spread.min, erases);
    spread.max = std::max(spread.max, erases);
    total += erases;
  }
  spread.mean = static_cast<double>(total) / static_cast<double>(blocks);
  return spread;
}

}  // namespace flashdir::sim
