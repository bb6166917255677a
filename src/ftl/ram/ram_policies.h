// Internal to src/ftl/ram: the factories of the policies.
#pragma once

#include <memory>

#include "ram_manager.h"

namespace flashdir::ram {

// TreeFTL, and `stack` (TreeFTL's groups in CFTL's compact form). `whole_map` is the `page`
// scheme's map (then no translation page is cached); null for dftl and cftl.
std::unique_ptr<RamManager> make_tree_ram(const ftl::FtlLayout& layout, const FtlOptions& options,
                                          TranslationPages& pages, FtlStats& stats,
                                          std::unique_ptr<ftl::Mapper> whole_map);

// static:P and APS: `mapping` is the mapping scheme (an entry cache, or the `page` scheme's
// whole map, which takes no budget).
std::unique_ptr<RamManager> make_partitioned_ram(const ftl::FtlLayout& layout, const FtlOptions& options,
                                                 const LatencyProfile& latency, FtlStats& stats,
                                                 std::unique_ptr<ftl::Mapper> mapping, bool mapping_is_free);

}  // namespace flashdir::ram
