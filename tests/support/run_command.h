// Runs a shell command for tests of the real binaries, capturing stdout and stderr together.
#pragma once

#include <string>

namespace flashdir::testing {

struct CommandResult {
  int exit_code = -1;  // the process's exit status, or -1 if it did not exit normally
  std::string output;
};

CommandResult run_command(const std::string& command);
// Path of a built tool, from the environment variable meson sets for the test (e.g.
// MKFS_FLASHDIR); shell-quoted.
std::string tool_path(const char* env_name);

}  // namespace flashdir::testing
