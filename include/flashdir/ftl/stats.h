// What an FTL counts. Chip counters are those of this FTL's session on the chip.
#pragma once

#include <cstdint>

namespace flashdir {

struct FtlStats {
  // Host requests and the pages they covered.
  std::uint64_t read_requests = 0;
  std::uint64_t write_requests = 0;
  std::uint64_t trim_requests = 0;
  std::uint64_t read_pages = 0;
  std::uint64_t write_pages = 0;
  std::uint64_t trim_pages = 0;
  std::uint64_t hot_write_pages = 0;  // host pages sent to the hot frontier

  // The chip.
  std::uint64_t chip_page_reads = 0;
  std::uint64_t chip_page_programs = 0;
  std::uint64_t chip_block_erases = 0;
  std::uint64_t chip_busy_ns = 0;

  // Garbage collection.
  std::uint64_t gc_runs = 0;
  std::uint64_t gc_data_copies = 0;
  std::uint64_t gc_translation_copies = 0;

  // Mapping.
  std::uint64_t translation_page_reads = 0;
  std::uint64_t translation_page_writes = 0;
  std::uint64_t gc_translation_page_reads = 0;   // ... of them, during GC runs: loading the
  std::uint64_t gc_translation_page_writes = 0;  // entries of relocated pages, moving translation pages
  std::uint64_t mapping_lookups = 0;        // translations asked of the mapping cache
  std::uint64_t mapping_hits = 0;
  std::uint64_t mapping_read_lookups = 0;   // ... of them, for host reads
  std::uint64_t mapping_read_hits = 0;
  std::uint64_t mapping_write_lookups = 0;  // ... for host writes and trims
  std::uint64_t mapping_write_hits = 0;
  std::uint64_t cbmt_lookups = 0;
  std::uint64_t cbmt_hits = 0;
  std::uint64_t conversions_to_block = 0;   // logical blocks put under block mapping
  std::uint64_t conversions_to_page = 0;    // block-mapped logical blocks given back to page mapping
  std::uint64_t consolidation_copies = 0;   // pages copied to lay logical blocks out whole

  // Device RAM: the write buffer, evictions, and the split of the budget.
  std::uint64_t buffer_read_lookups = 0;
  std::uint64_t buffer_read_hits = 0;
  std::uint64_t buffer_write_lookups = 0;   // pages written through the buffer
  std::uint64_t buffer_write_hits = 0;      // ... that replaced a buffered page
  std::uint64_t bypass_write_pages = 0;     // pages of writes too long for the buffer
  std::uint64_t forced_write_pages = 0;     // pages of Durability::forced writes (never buffered)
  std::uint64_t forced_program_pages = 0;   // buffered pages programmed early by make_durable()
  std::uint64_t evicted_data_pages = 0;     // buffered pages programmed to make room
  std::uint64_t evicted_mapping_entries = 0;
  std::uint64_t evicted_translation_pages = 0;  // cached translation pages dropped (TreeFTL)
  std::uint64_t ram_page_ops = 0;           // pages moved into or out of RAM
  std::uint64_t ram_ns = 0;                 // ... their simulated time
  std::uint64_t ram_budget_bytes = 0;
  std::uint64_t ram_mapping_bytes = 0;      // now
  std::uint64_t ram_buffer_bytes = 0;
  std::uint64_t ram_peak_mapping_bytes = 0;
  std::uint64_t ram_peak_buffer_bytes = 0;
  double ram_mapping_share_sum = 0;         // mapping share of the budget, summed over requests
  std::uint64_t aps_repartitions = 0;

  // Durability.
  std::uint64_t checkpoints = 0;
  std::uint64_t checkpoint_pages = 0;

  // Wear (erase counts over the whole chip, from the chip's counters).
  std::uint32_t erase_count_min = 0;
  std::uint32_t erase_count_max = 0;
  double erase_count_mean = 0;

  // Time, simulated: total service time of host requests (chip busy time they caused).
  std::uint64_t service_ns = 0;

  // Space.
  std::uint64_t logical_pages = 0;
  std::uint64_t free_blocks = 0;

  // Field by field: the same requests on the same chip give exactly the same figures.
  bool operator==(const FtlStats&) const = default;

  double write_amplification() const {
    return write_pages == 0 ? 0.0 : static_cast<double>(chip_page_programs) / static_cast<double>(write_pages);
  }
  double mean_mapping_share() const {
    const std::uint64_t requests = read_requests + write_requests + trim_requests;
    return requests == 0 ? 0.0 : ram_mapping_share_sum / static_cast<double>(requests);
  }
  double mean_service_ns() const {
    const std::uint64_t requests = read_requests + write_requests + trim_requests;
    return requests == 0 ? 0.0 : static_cast<double>(service_ns) / static_cast<double>(requests);
  }
  static double ratio(std::uint64_t part, std::uint64_t whole) {
    return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
  }
};

}  // namespace flashdir
