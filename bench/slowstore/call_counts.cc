#include "call_counts.h"

namespace slowstore {

namespace {

constexpr std::array<std::string_view, kCallKinds> kNames = {
    "getattr", "readlink", "mknod", "mkdir", "unlink", "rmdir", "symlink", "rename", "link", "chmod",
    "chown", "truncate", "open", "read", "write", "statfs", "flush", "release", "fsync", "setxattr",
    "getxattr", "listxattr", "removexattr", "opendir", "readdir", "releasedir", "create", "utimens",
    "fallocate",
};

std::size_t index_of(Call call) { return static_cast<std::size_t>(call); }

}  // namespace

std::string_view name_of(Call call) { return kNames[index_of(call)]; }

void CallCounts::add(Call call, std::size_t bytes_read, std::size_t bytes_written) {
  calls_[index_of(call)].fetch_add(1, std::memory_order_relaxed);
  bytes_read_.fetch_add(bytes_read, std::memory_order_relaxed);
  bytes_written_.fetch_add(bytes_written, std::memory_order_relaxed);
}

std::uint64_t CallCounts::of(Call call) const { return calls_[index_of(call)].load(std::memory_order_relaxed); }

std::string CallCounts::json(std::uint64_t latency_us) const {
  std::string text = "{\"calls\": {";
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < kCallKinds; ++i) {
    const std::uint64_t n = calls_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    if (total != 0) text += ", ";
    text += "\"" + std::string(kNames[i]) + "\": " + std::to_string(n);
    total += n;
  }
  text += "}, \"total_calls\": " + std::to_string(total);
  text += ", \"bytes_read\": " + std::to_string(bytes_read_.load(std::memory_order_relaxed));
  text += ", \"bytes_written\": " + std::to_string(bytes_written_.load(std::memory_order_relaxed));
  text += ", \"latency_us\": " + std::to_string(latency_us) + "}\n";
  return text;
}

}  // namespace slowstore
