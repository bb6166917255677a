#include "run_command.h"

#include <sys/wait.h>

#include <array>
#include <cctype>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace flashdir::testing {

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buffer;
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::string tool_path(const char* env_name) {
  if (const char* path = std::getenv(env_name); path != nullptr) return "'" + std::string(path) + "'";
  // Run by hand from the build tree: the tools sit beside tests/ (e.g. build/mkfs/mkfs.flashdir).
  const auto build = std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path();
  for (const char* tool : {"mkfs/mkfs.flashdir", "fsck/fsck.flashdir", "sim/flashdir-sim"}) {
    std::string env(std::filesystem::path(tool).filename().string());
    for (auto& c : env) {
      c = (c == '.' || c == '-') ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (env == env_name) return "'" + (build / tool).string() + "'";
  }
  throw std::runtime_error(std::string(env_name) + " is not set and names no tool of the build tree");
}

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

CommandResult mkfs(const std::string& args) { return run_command(tool_path("MKFS_FLASHDIR") + " " + args); }
CommandResult fsck(const std::string& args) { return run_command(tool_path("FSCK_FLASHDIR") + " " + args); }

}  // namespace flashdir::testing
