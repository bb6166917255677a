// `flashdir stats MOUNT --interval N`: one line of rates per interval, as iostat prints them,
// from two snapshots of the mount's stats.json taken N seconds apart.
#pragma once

#include <string>

#include "stats_figures.h"

namespace flashdir::stats {

// The column names, to print before the first line and again every screenful.
std::string rates_header();
// What happened between `before` and `after`, `seconds` apart, stamped with `clock` (HH:MM:SS):
// reads/s, read MiB/s, hit ratio, MiB/s from the cache and from the backing, writes/s, write
// MiB/s, and the dirty bytes and fill at the end. A counter reset in between counts from zero.
std::string rates_line(const std::string& clock, const Json& before, const Json& after, double seconds);

}  // namespace flashdir::stats
