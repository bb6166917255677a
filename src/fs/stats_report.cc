#include "fs/stats_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace flashdir::fs {
namespace {

constexpr std::array<const char*, kOpCount> kOpNames = {
    "lookup",  "forget",  "getattr", "setattr", "readlink",   "mknod",    "mkdir",    "unlink",    "rmdir",
    "symlink", "rename",  "link",    "open",    "read",       "write",    "flush",    "release",   "fsync",
    "opendir", "readdir", "releasedir", "fsyncdir", "statfs", "setxattr", "getxattr", "listxattr",
    "removexattr", "create", "fallocate", "copy_file_range", "lseek", "flock"};

std::string text_of(const StatsValue& value) {
  if (const auto* n = std::get_if<std::uint64_t>(&value)) return std::to_string(*n);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{:.4g}", *d);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return std::get<std::string>(value);
}

}  // namespace

const char* op_name(Op op) { return kOpNames[static_cast<std::size_t>(op)]; }

std::string render_table(const std::vector<StatsSection>& sections) {
  std::size_t width = 0;
  for (const auto& section : sections)
    for (const auto& row : section.rows) width = std::max(width, row.first.size());
  std::string text;
  for (const auto& section : sections) {
    text += fmt::format("{}\n", section.name);
    for (const auto& [name, value] : section.rows) text += fmt::format("  {:<{}}  {}\n", name, width, text_of(value));
  }
  return text;
}

std::string render_json(const std::vector<StatsSection>& sections) {
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  for (const auto& section : sections) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::object();
    for (const auto& [name, value] : section.rows)
      std::visit([&rows, &name](const auto& v) { rows[name] = v; }, value);
    root[section.name] = std::move(rows);
  }
  return root.dump(2) + "\n";
}

void OpCounters::count_file_read(std::uint64_t bytes, bool pass_through) {
  read_requests_.fetch_add(1, std::memory_order_relaxed);
  read_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (pass_through) pass_through_read_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

void OpCounters::count_file_write(std::uint64_t bytes, bool pass_through) {
  write_requests_.fetch_add(1, std::memory_order_relaxed);
  written_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (pass_through) pass_through_written_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

std::vector<StatsSection> OpCounters::sections() const {
  StatsSection requests{"requests", {}};
  for (std::size_t i = 0; i < kOpCount; ++i) {
    const std::uint64_t n = ops_[i].load(std::memory_order_relaxed);
    if (n != 0) requests.rows.emplace_back(kOpNames[i], n);
  }
  StatsSection data{"data", {}};
  data.rows.emplace_back("read_requests", read_requests_.load(std::memory_order_relaxed));
  data.rows.emplace_back("read_bytes", read_bytes_.load(std::memory_order_relaxed));
  data.rows.emplace_back("pass_through_read_bytes", pass_through_read_bytes_.load(std::memory_order_relaxed));
  data.rows.emplace_back("write_requests", write_requests_.load(std::memory_order_relaxed));
  data.rows.emplace_back("written_bytes", written_bytes_.load(std::memory_order_relaxed));
  data.rows.emplace_back("pass_through_written_bytes", pass_through_written_bytes_.load(std::memory_order_relaxed));
  data.rows.emplace_back("errors", errors_.load(std::memory_order_relaxed));
  data.rows.emplace_back("capability_xattr_from_memory", capability_from_memory_.load(std::memory_order_relaxed));
  data.rows.emplace_back("getattr_from_memory", attributes_from_memory_.load(std::memory_order_relaxed));
  data.rows.emplace_back("opens_from_memory", opens_from_memory_.load(std::memory_order_relaxed));
  return {std::move(requests), std::move(data)};
}

}  // namespace flashdir::fs
