#include "ram_manager.h"

#include "ram_policies.h"

namespace flashdir::ram {

Result<std::unique_ptr<RamManager>> make_ram_manager(const ftl::FtlLayout& layout, const FtlOptions& options,
                                                     const LatencyProfile& latency, TranslationPages& pages,
                                                     FtlStats& stats) {
  const bool whole_map = options.mapping == format::MappingScheme::page;
  std::unique_ptr<ftl::Mapper> mapping;
  if (whole_map) {
    auto loaded = ftl::load_page_mapper(layout, pages, stats);
    if (!loaded.is_ok()) return loaded.status();
    mapping = std::move(loaded).value();
  }
  if (options.ram.policy == format::RamPolicy::tree || options.ram.policy == format::RamPolicy::stack) {
    return make_tree_ram(layout, options, pages, stats, std::move(mapping));
  }
  if (!whole_map) {
    // The CBMT's share is taken from the mapping partition the policy starts with.
    const std::uint64_t percent =
        options.ram.policy == format::RamPolicy::aps ? 50 : options.ram.static_mapping_percent;
    const std::uint64_t start = options.ram.budget_bytes * percent / 100;
    mapping = ftl::make_entry_mapper(options.mapping, layout, options, pages, stats, start,
                                     start * options.cftl.cbmt_share_percent / 100);
  }
  return make_partitioned_ram(layout, options, latency, stats, std::move(mapping), whole_map);
}

Result<std::unique_ptr<RamManager>> make_recovery_ram(const ftl::FtlLayout& layout, TranslationPages& pages,
                                                      FtlStats& stats, std::vector<std::uint32_t> map,
                                                      std::vector<std::uint64_t> dirty_tpns) {
  auto mapping = ftl::make_page_mapper(layout, pages, stats, std::move(map), std::move(dirty_tpns));
  if (!mapping.is_ok()) return mapping.status();
  FtlOptions options;
  options.mapping = format::MappingScheme::page;
  options.ram.policy = format::RamPolicy::static_split;
  options.ram.budget_bytes = 0;
  return make_partitioned_ram(layout, options, LatencyProfile::of(LatencyPreset::zero), stats,
                              std::move(mapping).value(), true);
}

}  // namespace flashdir::ram
