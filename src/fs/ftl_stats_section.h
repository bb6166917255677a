// The "ftl" section of the stats file: which mapping scheme, GC policy and device RAM policy
// the simulated SSD under the cache runs, and what it did since the mount (chip operations,
// garbage collection, write amplification, wear, device RAM split, CFTL's CBMT and
// conversions, APS's repartitions).
#pragma once

#include "flashdir/ftl/options.h"
#include "flashdir/ftl/stats.h"
#include "fs/stats_report.h"

namespace flashdir::fs {

StatsSection ftl_stats_section(const FtlStats& stats, const FtlOptions& options);

}  // namespace flashdir::fs
