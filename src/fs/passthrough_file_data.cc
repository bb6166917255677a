#include "fs/passthrough_file_data.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "fs/descriptor_path.h"

namespace flashdir::fs {

SysResult<std::unique_ptr<OpenFile>> PassthroughFileData::open(OpenRequest request) {
  return PassthroughFile::open(*request.backing);
}

SysResult<std::unique_ptr<OpenFile>> PassthroughFile::open(CallerBackingFd& backing) {
  auto fd = backing.take();
  if (!fd.is_ok()) return Errno{fd.error()};
  return std::unique_ptr<OpenFile>(std::make_unique<PassthroughFile>(std::move(*fd)));
}

std::vector<StatsSection> PassthroughFileData::stats() const {
  // Until the cache engine is plugged in every byte bypasses the cache; the request counters
  // above say how many.
  return {StatsSection{"cache", {{"engine", std::string("none: data passes through to the backing files")}}}};
}

SysResult<bool> PassthroughFileData::truncate_unopened(int path_fd, const std::string&, std::uint64_t size_bytes) {
  if (::truncate(proc_path(path_fd).c_str(), static_cast<off_t>(size_bytes)) != 0) return last_errno();
  return true;
}

// pread/pwrite loop until done, end of file, or an error after nothing was moved; a short
// transfer from the backing (a signal, a network file system) must not reach the caller as
// a short read in the middle of a file.
SysResult<std::size_t> PassthroughFile::read(std::uint64_t offset, ByteSpan out, cache::DeferredFill*) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd_.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (done > 0) break;
      return last_errno();
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

PassthroughFile::PassthroughFile(UniqueFd fd) : fd_(std::move(fd)) {
  const int flags = ::fcntl(fd_.get(), F_GETFL);
  append_ = flags >= 0 && (flags & O_APPEND) != 0;
}

SysResult<bool> PassthroughFile::set_append(bool append) {
  if (append == append_) return true;
  const int flags = ::fcntl(fd_.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd_.get(), F_SETFL, append ? flags | O_APPEND : flags & ~O_APPEND) != 0) return last_errno();
  append_ = append;
  return true;
}

SysResult<std::size_t> PassthroughFile::write(std::uint64_t offset, ConstByteSpan in, bool append) {
  if (auto set = set_append(append); !set.is_ok()) return Errno{set.error()};
  std::size_t done = 0;
  while (done < in.size()) {
    // On an O_APPEND descriptor Linux's pwrite ignores the offset and appends: that is the
    // atomic append the caller asked for.
    const ssize_t n = ::pwrite(fd_.get(), in.data() + done, in.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (done > 0) break;
      return last_errno();
    }
    done += static_cast<std::size_t>(n);
  }
  return done;
}

SysResult<bool> PassthroughFile::truncate(std::uint64_t size_bytes) {
  if (::ftruncate(fd_.get(), static_cast<off_t>(size_bytes)) != 0) return last_errno();
  return true;
}

SysResult<bool> PassthroughFile::fallocate(int mode, std::uint64_t offset, std::uint64_t length) {
  if (::fallocate(fd_.get(), mode, static_cast<off_t>(offset), static_cast<off_t>(length)) != 0) return last_errno();
  return true;
}

SysResult<bool> PassthroughFile::fsync(bool data_only) {
  if ((data_only ? ::fdatasync(fd_.get()) : ::fsync(fd_.get())) != 0) return last_errno();
  return true;
}

}  // namespace flashdir::fs
