#include "fs/device_stats.h"

namespace flashdir::fs {

StatsSection device_section(const FtlStats& s) {
  StatsSection device{"device", {}};
  auto& rows = device.rows;
  // Host traffic, and what it cost the chip.
  rows.emplace_back("host_read_pages", s.read_pages);
  rows.emplace_back("host_write_pages", s.write_pages);
  rows.emplace_back("host_trim_pages", s.trim_pages);
  rows.emplace_back("chip_page_reads", s.chip_page_reads);
  rows.emplace_back("chip_page_programs", s.chip_page_programs);
  rows.emplace_back("chip_block_erases", s.chip_block_erases);
  rows.emplace_back("chip_busy_ns", s.chip_busy_ns);
  rows.emplace_back("write_amplification", s.write_amplification());
  // Garbage collection.
  rows.emplace_back("gc_runs", s.gc_runs);
  rows.emplace_back("gc_data_copies", s.gc_data_copies);
  rows.emplace_back("gc_translation_copies", s.gc_translation_copies);
  rows.emplace_back("free_blocks", s.free_blocks);
  // Wear over the whole chip.
  rows.emplace_back("erase_count_min", std::uint64_t{s.erase_count_min});
  rows.emplace_back("erase_count_mean", s.erase_count_mean);
  rows.emplace_back("erase_count_max", std::uint64_t{s.erase_count_max});
  // Device RAM: the budget and how it is split between the mapping and the write buffer.
  rows.emplace_back("ram_budget_bytes", s.ram_budget_bytes);
  rows.emplace_back("ram_mapping_bytes", s.ram_mapping_bytes);
  rows.emplace_back("ram_buffer_bytes", s.ram_buffer_bytes);
  rows.emplace_back("ram_mean_mapping_share", s.mean_mapping_share());
  rows.emplace_back("mapping_hit_ratio", FtlStats::ratio(s.mapping_hits, s.mapping_lookups));
  return device;
}

}  // namespace flashdir::fs
