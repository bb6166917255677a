// Mounting: everything between a parsed command line and a running FUSE session, and the
// clean shutdown after it. The `flashdir` tool calls run_mount(); nothing else is public.
#pragma once

#include <filesystem>
#include <string>

#include "fs/mount_options.h"

namespace flashdir::fs {

struct MountRequest {
  std::filesystem::path backing;
  std::filesystem::path mountpoint;
  MountOptions options;
  std::string program_name;  // argv[0], for libfuse
};

// Checks the backing directory and the cache, mounts, serves until unmounted or signalled
// (SIGTERM, SIGINT, SIGHUP), then closes the cache cleanly. Without `foreground` it returns in
// the calling process once the mount is up (0) or has failed (1, after printing why); the
// daemon carries on in a child. Exit code of the tool.
int run_mount(const MountRequest& request);

}  // namespace flashdir::fs
