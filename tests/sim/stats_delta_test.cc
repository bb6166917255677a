// The measured part of a run: counters subtracted, gauges kept, erases spread per block.
#include <catch2/catch.hpp>

#include "flashdir/clock.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "flashdir/sim/stats_delta.h"

using namespace flashdir;
using namespace flashdir::sim;

TEST_CASE("stats delta: counters are subtracted, gauges are the later values", "[sim][stats]") {
  FtlStats before;
  FtlStats after;
  std::uint64_t value = 1;
  // Every counter gets distinct values: before = v, after = 3v + 1.
  for (auto field : {&FtlStats::read_requests,
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
                     &FtlStats::mapping_lookups,
                     &FtlStats::mapping_hits,
                     &FtlStats::cbmt_lookups,
                     &FtlStats::cbmt_hits,
                     &FtlStats::conversions_to_block,
                     &FtlStats::conversions_to_page,
                     &FtlStats::consolidation_copies,
                     &FtlStats::checkpoints,
                     &FtlStats::checkpoint_pages,
                     &FtlStats::service_ns,
                     &FtlStats::mapping_read_lookups,
                     &FtlStats::mapping_read_hits,
                     &FtlStats::mapping_write_lookups,
                     &FtlStats::mapping_write_hits,
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
                     &FtlStats::gc_translation_page_reads,
                     &FtlStats::gc_translation_page_writes,
                     &FtlStats::forced_write_pages,
                     &FtlStats::forced_program_pages}) {
    before.*field = value;
    after.*field = 3 * value + 1;
    ++value;
  }
  before.erase_count_min = 1;
  before.erase_count_max = 4;
  before.erase_count_mean = 2.5;
  before.ram_mapping_share_sum = 10.5;
  before.ram_budget_bytes = 65536;
  before.ram_mapping_bytes = 4096;
  before.ram_peak_mapping_bytes = 8192;
  before.logical_pages = 1000;
  before.free_blocks = 9;
  after.erase_count_min = 2;
  after.erase_count_max = 7;
  after.erase_count_mean = 4.25;
  after.ram_mapping_share_sum = 30.0;
  after.ram_budget_bytes = 65536;
  after.ram_mapping_bytes = 2048;
  after.ram_peak_mapping_bytes = 16384;
  after.logical_pages = 1000;
  after.free_blocks = 5;

  const FtlStats d = stats_delta(before, after);
  CHECK(d.read_requests == 3);
  CHECK(d.write_requests == 5);
  CHECK(d.write_pages == 2 * 5 + 1);
  CHECK(d.chip_page_programs == 2 * 9 + 1);
  CHECK(d.chip_busy_ns == 2 * 11 + 1);
  CHECK(d.gc_runs == 2 * 12 + 1);
  CHECK(d.cbmt_hits == 2 * 20 + 1);
  CHECK(d.service_ns == 2 * 26 + 1);
  CHECK(d.mapping_read_lookups == 2 * 27 + 1);
  CHECK(d.ram_ns == 2 * 40 + 1);
  CHECK(d.aps_repartitions == 2 * 41 + 1);
  CHECK(d.gc_translation_page_writes == 2 * 43 + 1);
  CHECK(d.forced_write_pages == 2 * 44 + 1);
  CHECK(d.forced_program_pages == 2 * 45 + 1);
  CHECK(d.ram_mapping_share_sum == 19.5);
  CHECK(d.ram_budget_bytes == 65536);
  CHECK(d.ram_mapping_bytes == 2048);
  CHECK(d.ram_peak_mapping_bytes == 16384);
  CHECK(d.erase_count_min == 2);
  CHECK(d.erase_count_max == 7);
  CHECK(d.erase_count_mean == 4.25);
  CHECK(d.logical_pages == 1000);
  CHECK(d.free_blocks == 5);
  CHECK(d.write_amplification() ==
        static_cast<double>(d.chip_page_programs) / static_cast<double>(d.write_pages));

  const FtlStats none = stats_delta(after, after);
  CHECK(none.read_requests == 0);
  CHECK(none.service_ns == 0);
  CHECK(none.write_amplification() == 0.0);

  // Sessions add up: the deltas of two sessions summed, the gauges of the later one.
  FtlStats total = d;
  stats_add(total, stats_delta(before, before));
  CHECK(total.read_requests == d.read_requests);
  CHECK(total.free_blocks == before.free_blocks);
  stats_add(total, d);
  CHECK(total.read_requests == 2 * d.read_requests);
  CHECK(total.aps_repartitions == 2 * d.aps_repartitions);
  CHECK(total.service_ns == 2 * d.service_ns);
  CHECK(total.forced_program_pages == 2 * d.forced_program_pages);
  CHECK(total.ram_mapping_share_sum == 2 * d.ram_mapping_share_sum);
  CHECK(total.free_blocks == d.free_blocks);
  CHECK(total.erase_count_max == d.erase_count_max);
}

TEST_CASE("stats delta: erases per block since a snapshot", "[sim][stats]") {
  Geometry geometry;
  geometry.pages_per_block = 4;
  geometry.block_count = 8;
  SimClock clock;
  SimulatedChip chip(make_metadata_store(geometry), LatencyProfile::of(LatencyPreset::zero), clock);
  REQUIRE(chip.erase(BlockNumber(3)).is_ok());
  const auto before = erase_counts(chip);
  CHECK(before.size() == 8);
  CHECK(before[3] == 1);
  for (int i = 0; i < 3; ++i) REQUIRE(chip.erase(BlockNumber(5)).is_ok());
  REQUIRE(chip.erase(BlockNumber(3)).is_ok());

  const EraseSpread since = erase_spread(chip, before);
  CHECK(since.min == 0);
  CHECK(since.max == 3);
  CHECK(since.mean == 4.0 / 8);
  const EraseSpread life = erase_spread(chip);
  CHECK(life.min == 0);
  CHECK(life.max == 3);
  CHECK(life.mean == 5.0 / 8);
}
