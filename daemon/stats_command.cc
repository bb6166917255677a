#include "stats_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>
#include <thread>

#include "stats_rates.h"
#include "stats_summary.h"

namespace flashdir::stats {
namespace {

constexpr const char* kTool = "flashdir";
constexpr int kExitFailure = 1;
constexpr std::uint64_t kLinesPerHeader = 20;  // the header again every screenful, as iostat and vmstat do

std::string control_path(const std::string& mount, const char* name) {
  return fmt::format("{}/.flashdir/{}", mount, name);
}

// Why a control file could not be opened, said as what to do.
void report_open_error(const std::string& mount, const std::string& path, int error) {
  if (error == ENOENT || error == ENOTDIR)
    fmt::print(stderr, "{}: {} is not a flashdir mount (no {})\n", kTool, mount, path);
  else if (error == EACCES || error == EPERM)
    fmt::print(stderr, "{}: {}: {} (only the user who mounted it and root may read or reset its stats)\n", kTool,
               path, std::strerror(error));
  else
    fmt::print(stderr, "{}: cannot open {}: {}\n", kTool, path, std::strerror(error));
}

// The whole of a control file (one snapshot: the daemon takes it at open), or nothing after
// saying why on stderr.
std::optional<std::string> read_control_file(const std::string& mount, const char* name) {
  const std::string path = control_path(mount, name);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    report_open_error(mount, path, errno);
    return std::nullopt;
  }
  std::string text;
  char buffer[1 << 16];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  const int error = errno;
  ::close(fd);
  if (n < 0) {
    fmt::print(stderr, "{}: reading {}: {}\n", kTool, path, std::strerror(error));
    return std::nullopt;
  }
  return text;
}

std::optional<Json> read_stats(const std::string& mount) {
  auto text = read_control_file(mount, "stats.json");
  if (!text) return std::nullopt;
  Json stats = Json::parse(*text, nullptr, false);
  if (stats.is_discarded() || !stats.is_object() || !stats.contains("mount")) {
    fmt::print(stderr, "{}: {} does not hold flashdir stats\n", kTool, control_path(mount, "stats.json"));
    return std::nullopt;
  }
  return stats;
}

int print_control_file(const std::string& mount, const char* name) {
  auto text = read_control_file(mount, name);
  if (!text) return kExitFailure;
  fmt::print("{}", *text);
  return 0;
}

int print_summary(const std::string& mount) {
  auto stats = read_stats(mount);
  if (!stats) return kExitFailure;
  fmt::print("{}", summary(mount, *stats));
  return 0;
}

int reset(const std::string& mount) {
  const std::string path = control_path(mount, "reset");
  // The daemon zeroes the counters when the file is opened for writing.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    report_open_error(mount, path, errno);
    return kExitFailure;
  }
  ::close(fd);
  fmt::print("{}: the counters of {} are zeroed (the fill, dirty pages and restart report are not counters)\n", kTool,
             mount);
  return 0;
}

std::string wall_clock() { return fmt::format("{:%H:%M:%S}", fmt::localtime(std::time(nullptr))); }

int print_rates(const StatsCommand& command) {
  auto before = read_stats(command.mount);
  if (!before) return kExitFailure;
  auto taken = std::chrono::steady_clock::now();
  const auto interval = std::chrono::duration<double>(command.interval_seconds);
  for (std::uint64_t printed = 0; command.count == 0 || printed < command.count; ++printed) {
    std::this_thread::sleep_until(taken + std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval));
    auto after = read_stats(command.mount);
    if (!after) return kExitFailure;
    const auto now = std::chrono::steady_clock::now();
    if (printed % kLinesPerHeader == 0) fmt::print("{}", rates_header());
    fmt::print("{}", rates_line(wall_clock(), *before, *after, std::chrono::duration<double>(now - taken).count()));
    std::fflush(stdout);
    before = std::move(after);
    taken = now;
  }
  return 0;
}

}  // namespace

int run_stats_command(const StatsCommand& command) {
  if (command.reset) return reset(command.mount);
  if (command.interval_seconds > 0) return print_rates(command);
  if (command.json) return print_control_file(command.mount, "stats.json");
  if (command.all) return print_control_file(command.mount, "stats");
  return print_summary(command.mount);
}

}  // namespace flashdir::stats
