#include "fs/ftl_stats_section.h"

#include <string>

namespace flashdir::fs {

StatsSection ftl_stats_section(const FtlStats& s, const FtlOptions& options) {
  return StatsSection{"ftl",
                      {
                          // What runs (mkfs.flashdir --mapping, --gc, --ram-policy; -o ram_policy=).
                          {"mapping_scheme", std::string(format::mapping_scheme_name(options.mapping))},
                          {"gc_policy", std::string(format::gc_policy_name(options.gc))},
                          {"ram_policy", ram_policy_label(options.ram)},
                          {"consolidation", std::string(consolidation_mode_name(options.cftl.consolidation))},
                          {"host_read_pages", s.read_pages},
                          {"host_write_pages", s.write_pages},
                          {"host_trim_pages", s.trim_pages},
                          {"chip_page_reads", s.chip_page_reads},
                          {"chip_page_programs", s.chip_page_programs},
                          {"chip_block_erases", s.chip_block_erases},
                          {"chip_busy_ns", s.chip_busy_ns},
                          {"write_amplification", s.write_amplification()},
                          {"gc_runs", s.gc_runs},
                          {"gc_data_copies", s.gc_data_copies},
                          {"gc_translation_copies", s.gc_translation_copies},
                          {"erase_count_min", std::uint64_t{s.erase_count_min}},
                          {"erase_count_mean", s.erase_count_mean},
                          {"erase_count_max", std::uint64_t{s.erase_count_max}},
                          {"ram_budget_bytes", s.ram_budget_bytes},
                          {"ram_mapping_bytes", s.ram_mapping_bytes},
                          {"ram_buffer_bytes", s.ram_buffer_bytes},
                          {"ram_peak_mapping_bytes", s.ram_peak_mapping_bytes},
                          {"ram_peak_buffer_bytes", s.ram_peak_buffer_bytes},
                          {"mapping_lookups", s.mapping_lookups},
                          {"mapping_hits", s.mapping_hits},
                          {"mapping_hit_ratio", FtlStats::ratio(s.mapping_hits, s.mapping_lookups)},
                          // The hit ratio counts host lookups; translation-page I/O that only GC's
                          // relocations caused is shown apart (doc/ftl.md).
                          {"translation_page_reads_host", s.translation_page_reads - s.gc_translation_page_reads},
                          {"translation_page_reads_gc", s.gc_translation_page_reads},
                          {"translation_page_writes_host", s.translation_page_writes - s.gc_translation_page_writes},
                          {"translation_page_writes_gc", s.gc_translation_page_writes},
                          // CFTL: the CBMT (block-mapped logical blocks) and the conversions between
                          // page and block mapping; 0 under dftl and page.
                          {"cbmt_lookups", s.cbmt_lookups},
                          {"cbmt_hits", s.cbmt_hits},
                          {"cbmt_hit_ratio", FtlStats::ratio(s.cbmt_hits, s.cbmt_lookups)},
                          {"conversions_to_block", s.conversions_to_block},
                          {"conversions_to_page", s.conversions_to_page},
                          {"consolidation_copies", s.consolidation_copies},
                          // The device RAM's write buffer and APS's moves of the split (0 under
                          // tree and static).
                          {"buffer_write_lookups", s.buffer_write_lookups},
                          {"buffer_write_hits", s.buffer_write_hits},
                          {"evicted_data_pages", s.evicted_data_pages},
                          {"aps_repartitions", s.aps_repartitions},
                          {"checkpoints", s.checkpoints},
                          {"free_blocks", s.free_blocks},
                          {"logical_pages", s.logical_pages},
                      }};
}

}  // namespace flashdir::fs
