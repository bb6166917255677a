// The stats file's "device" section: what the simulated SSD under the cache did, from the
// FTL's counters (chip operations, garbage collection, write amplification, wear, device RAM).
#pragma once

#include "flashdir/ftl/stats.h"
#include "fs/stats_report.h"

namespace flashdir::fs {

StatsSection device_section(const FtlStats& ftl);

}  // namespace flashdir::fs
