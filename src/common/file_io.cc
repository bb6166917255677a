#include "flashdir/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace flashdir {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string proc_path(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

Status errno_status(const std::string& context) {
  return Status::io_error(fmt::format("{}: {}", context, std::strerror(errno)));
}

Status pread_exact(int fd, ByteSpan out, std::uint64_t offset, std::string_view what) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(fmt::format("reading {} at offset {}", what, offset + done));
    }
    if (n == 0) {
      return Status::corruption(fmt::format("{} is truncated: end of file at offset {}, expected {} more bytes", what,
                                            offset + done, out.size() - done));
    }
    done += static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Status pwrite_all(int fd, ConstByteSpan in, std::uint64_t offset, std::string_view what) {
  std::size_t done = 0;
  while (done < in.size()) {
    const ssize_t n = ::pwrite(fd, in.data() + done, in.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(fmt::format("writing {} at offset {}", what, offset + done));
    }
    done += static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Status sync_directory(const std::filesystem::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno_status(fmt::format("opening directory {}", dir.string()));
  if (::fsync(fd.get()) != 0) return errno_status(fmt::format("syncing directory {}", dir.string()));
  return Status::ok();
}

}  // namespace flashdir
