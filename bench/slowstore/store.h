// The state of one slowstore mount: the backing directory every path resolves below, the
// latency its calls pay and the count of them.
#pragma once

#define FUSE_USE_VERSION 31

#include <fuse.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "call_counts.h"
#include "latency.h"

namespace slowstore {

struct Store {
  int root_fd = -1;           // the backing directory, opened before the mount
  Latency latency;
  CallCounts counts;
  std::string counts_path;    // where the counts go at unmount and at SIGUSR1 ("": nowhere)
  bool whole_seconds = false;  // times reported in whole seconds, as an SFTP store (sshfs) reports them

  // Counts `call` and makes it wait its round trip and, for payload, its turn on the line.
  void pay(Call call, std::size_t bytes_read = 0, std::size_t bytes_written = 0) {
    counts.add(call, bytes_read, bytes_written);
    latency.round_trip();
    latency.transfer(bytes_read + bytes_written);
  }

  // Replaces counts_path with the counts so far (written aside, then renamed: a reader never
  // sees half a file).
  void write_counts() const;
};

// Writes the store's counts each time the process gets SIGUSR1, so that a benchmark can take
// the calls of one workload as the difference of two snapshots. Call before libfuse starts its
// threads: SIGUSR1 is blocked in this one and in every thread it starts after.
void write_counts_on_sigusr1(const Store& store);

// libfuse's high-level callbacks of a passthrough to Store::root_fd, each paying its latency.
fuse_operations passthrough_operations();

}  // namespace slowstore
