// What `flashdir stats MOUNT` prints by default: the figures an operator asks for first (as
// `casadm -P` and bcache's sysfs lead with them), in human units, from the mount's stats.json.
// `--all` prints every counter instead (the daemon's table), `--json` the JSON.
#pragma once

#include <string>

#include "stats_figures.h"

namespace flashdir::stats {

// About twenty lines: the counters' period, reads (hit ratio, bytes from the cache and from the
// backing), writes, what bypassed the cache and why, the sequential cutoffs, cache fill and dirty
// bytes, write amplification, the restart report, consistency and the cache's health.
std::string summary(const std::string& mount, const Json& stats);

}  // namespace flashdir::stats
