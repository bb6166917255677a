// POSIX file I/O with errors as Status values: whole-buffer pread/pwrite that survive EINTR
// and short transfers, and an owning file descriptor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir {

// Closes its descriptor on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// "/proc/self/fd/N": the path through which a call that takes a path reaches the object `fd`
// is open on (an O_PATH descriptor's, say), whatever its name is now.
std::string proc_path(int fd);

// io_error "<context>: <strerror(errno)>".
Status errno_status(const std::string& context);

// Reads exactly out.size() bytes at `offset`; hitting end of file is a corruption (the file is
// shorter than its format says). `what` names the file region in messages.
Status pread_exact(int fd, ByteSpan out, std::uint64_t offset, std::string_view what);
Status pwrite_all(int fd, ConstByteSpan in, std::uint64_t offset, std::string_view what);
// fsync of a directory, so that entries created in it survive a host crash.
Status sync_directory(const std::filesystem::path& dir);

}  // namespace flashdir
