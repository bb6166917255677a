// Runs a shell command for tests of the real binaries, capturing stdout and stderr together.
#pragma once

#include <filesystem>
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
// A path in single quotes, for a command line.
std::string quoted(const std::filesystem::path& path);
// mkfs.flashdir and fsck.flashdir with `args`.
CommandResult mkfs(const std::string& args);
CommandResult fsck(const std::string& args);

}  // namespace flashdir::testing
