// What `MOUNT/.flashdir/stats` shows: sections of named values, rendered as an aligned table
// (`flashdir stats MOUNT --all`) and as JSON (`--json`, from which the command computes its
// summary: daemon/stats_summary.h). The daemon's request counters live here too. No libfuse here.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace flashdir::fs {

using StatsValue = std::variant<std::uint64_t, double, bool, std::string>;

struct StatsSection {
  std::string name;
  std::vector<std::pair<std::string, StatsValue>> rows;
};

std::string render_table(const std::vector<StatsSection>& sections);
// {"section": {"row": value, ...}, ...}; the sections and rows keep their order.
std::string render_json(const std::vector<StatsSection>& sections);

// The FUSE requests the daemon answered, one ticker per kind (RocksDB's ticker style).
enum class Op : std::uint8_t {
  lookup, forget, getattr, setattr, readlink, mknod, mkdir, unlink, rmdir, symlink, rename, link, open,
  read, write, flush, release, fsync, opendir, readdir, releasedir, fsyncdir, statfs, setxattr, getxattr,
  listxattr, removexattr, create, fallocate, copy_file_range, lseek, flock, count_
};
inline constexpr std::size_t kOpCount = static_cast<std::size_t>(Op::count_);
const char* op_name(Op op);

class OpCounters {
 public:
  void count(Op op) { ops_[static_cast<std::size_t>(op)].fetch_add(1, std::memory_order_relaxed); }
  void count_error() { errors_.fetch_add(1, std::memory_order_relaxed); }
  // getxattr(security.capability) answered without asking the backing (see operations_xattr.cc).
  void count_capability_from_memory() { capability_from_memory_.fetch_add(1, std::memory_order_relaxed); }
  // A GETATTR answered from the attributes an open or a getattr just got (kept_attributes.h).
  void count_attributes_from_memory() { attributes_from_memory_.fetch_add(1, std::memory_order_relaxed); }
  // An open that stood on the stat an earlier open or check kept (readmostly, kept_open_answer).
  void count_open_from_memory() { opens_from_memory_.fetch_add(1, std::memory_order_relaxed); }
  // A read or write of a regular file's data (the control files' are not counted), and whether
  // it went straight to the backing file, through no cache (`pass_through`).
  void count_file_read(std::uint64_t bytes, bool pass_through);
  void count_file_write(std::uint64_t bytes, bool pass_through);
  // "requests" (every op with a non-zero count) and "data" (reads, writes, bytes, errors).
  std::vector<StatsSection> sections() const;

 private:
  std::array<std::atomic<std::uint64_t>, kOpCount> ops_{};
  std::atomic<std::uint64_t> errors_{0};
  std::atomic<std::uint64_t> capability_from_memory_{0};
  std::atomic<std::uint64_t> attributes_from_memory_{0};
  std::atomic<std::uint64_t> opens_from_memory_{0};
  std::atomic<std::uint64_t> read_requests_{0};
  std::atomic<std::uint64_t> read_bytes_{0};
  std::atomic<std::uint64_t> pass_through_read_bytes_{0};
  std::atomic<std::uint64_t> write_requests_{0};
  std::atomic<std::uint64_t> written_bytes_{0};
  std::atomic<std::uint64_t> pass_through_written_bytes_{0};
};

}  // namespace flashdir::fs
