// How many calls slowstore delayed, per kind, and the payload bytes it carried: what a test
// checks to know that every call paid its round trip, without timing anything.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace slowstore {

// One per callback of libfuse's high-level API that slowstore implements. `getattr` answers the
// kernel's LOOKUP as well as its GETATTR: the high-level API resolves names through it.
enum class Call {
  getattr, readlink, mknod, mkdir, unlink, rmdir, symlink, rename, link, chmod, chown, truncate,
  open, read, write, statfs, flush, release, fsync, setxattr, getxattr, listxattr, removexattr,
  opendir, readdir, releasedir, create, utimens, fallocate,
};
inline constexpr std::size_t kCallKinds = static_cast<std::size_t>(Call::fallocate) + 1;

std::string_view name_of(Call call);

class CallCounts {
 public:
  void add(Call call, std::size_t bytes_read = 0, std::size_t bytes_written = 0);

  std::uint64_t of(Call call) const;

  // {"calls": {"getattr": N, ...}, "total_calls": N, "bytes_read": N, "bytes_written": N,
  //  "latency_us": N}, kinds never called left out.
  std::string json(std::uint64_t latency_us) const;

 private:
  std::array<std::atomic<std::uint64_t>, kCallKinds> calls_{};
  std::atomic<std::uint64_t> bytes_read_{0};
  std::atomic<std::uint64_t> bytes_written_{0};
};

}  // namespace slowstore
