#include "flashdir/sim/stats_delta.h"

#include <algorithm>
#include <cassert>
#include <tuple>

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
    &FtlStats::forced_write_pages,
    &FtlStats::forced_program_pages,
    &FtlStats::evicted_data_pages,
    &FtlStats::evicted_mapping_entries,
    &FtlStats::evicted_translation_pages,
    &FtlStats::ram_page_ops,
    &FtlStats::ram_ns,
    &FtlStats::aps_repartitions,
    &FtlStats::checkpoints,
    &FtlStats::checkpoint_pages,
    &FtlStats::service_ns};

// The fields kept as the later snapshot's (ram_mapping_share_sum, a sum of doubles, is
// subtracted on its own).
constexpr auto kGauges = std::make_tuple(
    &FtlStats::ram_budget_bytes, &FtlStats::ram_mapping_bytes, &FtlStats::ram_buffer_bytes,
    &FtlStats::ram_peak_mapping_bytes, &FtlStats::ram_peak_buffer_bytes, &FtlStats::erase_count_min,
    &FtlStats::erase_count_max, &FtlStats::erase_count_mean, &FtlStats::logical_pages, &FtlStats::free_blocks);
constexpr std::size_t kSeparatelySummed = 1;  // ram_mapping_share_sum

// Converts to any field type: T{AnyField{}...} compiles for as many fields as T has, no more.
struct AnyField {
  template <typename T>
  constexpr operator T() const noexcept {
    return T{};
  }
};

template <typename T, typename... Fields>
constexpr std::size_t field_count() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return field_count<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

// A counter added to FtlStats but to neither list would be reported as the later snapshot's
// value, not the run's: refuse to build instead.
static_assert(field_count<FtlStats>() ==
                  std::size(kCounters) + std::tuple_size_v<decltype(kGauges)> + kSeparatelySummed,
              "a FtlStats field is missing from kCounters or kGauges");

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
