// `flashdir stats MOUNT [--all | --json | --interval N [--count K] | --reset]`: reads the
// control files the daemon serves in MOUNT/.flashdir (src/fs/control_files.cc).
#pragma once

#include <cstdint>
#include <string>

namespace flashdir::stats {

struct StatsCommand {
  std::string mount;
  bool all = false;            // every counter, the daemon's table
  bool json = false;           // the daemon's JSON
  bool reset = false;          // zero the counters
  double interval_seconds = 0;  // > 0: rates per interval
  std::uint64_t count = 0;     // intervals to print; 0: until interrupted
};

// Prints what was asked on stdout; errors go to stderr. The exit code: 0, or 1 when MOUNT is
// not a flashdir mount (or its stats cannot be read or reset).
int run_stats_command(const StatsCommand& command);

}  // namespace flashdir::stats
