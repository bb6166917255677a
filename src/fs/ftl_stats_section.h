// The "ftl" section of the stats file: what the simulated SSD under the cache did since the
// mount (chip operations, garbage collection, write amplification, wear, device RAM split).
#pragma once

#include "flashdir/ftl/stats.h"
#include "fs/stats_report.h"

namespace flashdir::fs {

StatsSection ftl_stats_section(const FtlStats& stats);

}  // namespace flashdir::fs
