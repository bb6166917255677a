#include "fs/caller_backing_fd.h"

#include <fcntl.h>

#include "fs/mount_context.h"

namespace flashdir::fs {

SysResult<int> CallerBackingFd::get() {
  std::lock_guard lock(mutex_);
  if (fd_.valid()) return fd_.get();
  if (path_fd_ == nullptr) return Errno{EBADF};  // taken
  // Reopening through /proc gives the access mode asked for; the O_PATH descriptor itself can
  // neither read nor write. (O_NOFOLLOW would refuse the /proc link itself.)
  fd_ = UniqueFd(::open(proc_path(path_fd_->get()).c_str(), (flags_ & ~O_NOFOLLOW) | O_CLOEXEC));
  if (!fd_.valid()) return last_errno();
  return fd_.get();
}

SysResult<UniqueFd> CallerBackingFd::take() {
  auto fd = get();
  if (!fd.is_ok()) return Errno{fd.error()};
  std::lock_guard lock(mutex_);
  path_fd_.reset();
  return std::move(fd_);
}

int CallerBackingFd::reference() const {
  std::lock_guard lock(mutex_);
  return fd_.valid() || path_fd_ == nullptr ? fd_.get() : path_fd_->get();
}

bool CallerBackingFd::opened() const {
  std::lock_guard lock(mutex_);
  return fd_.valid();
}

SysResult<int> CallerBackingFd::flags() const {
  std::lock_guard lock(mutex_);
  if (path_fd_ != nullptr && !fd_.valid()) return flags_;
  const int flags = ::fcntl(fd_.get(), F_GETFL);
  if (flags < 0) return last_errno();
  return flags;
}

}  // namespace flashdir::fs
