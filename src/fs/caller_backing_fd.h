// The caller's descriptor of a backing file, for one open through the mount.
//
// A writer's is opened by the open itself. A reader's, when the cache engine serves its data,
// is opened only when first needed (the access time a first read must mark, flock, lseek,
// fchmod or futimens through the handle, a switch to pass-through): a warm open whose reads the
// cache or the kernel's pages serve then costs the backing one stat, where an open, a flush and
// a close are three more round trips on a network store. Nothing is lost by waiting: the kernel
// checked the caller's access against the attributes already (the mount is always
// default_permissions), and the daemon opens the backing file as itself whenever it opens it.
//
// Thread safety: get() may be called from several worker threads at once; the first opens.
#pragma once

#include <mutex>

#include "flashdir/file_io.h"
#include "fs/inode_table.h"
#include "fs/sys_result.h"

namespace flashdir::fs {

class CallerBackingFd {
 public:
  // A descriptor already open.
  explicit CallerBackingFd(UniqueFd fd) : fd_(std::move(fd)) {}
  // Opened on first use through `path_fd` (O_PATH, kept alive meanwhile) with `flags` (the
  // backing open's flags, O_CREAT and O_TRUNC never among them).
  CallerBackingFd(SharedFd path_fd, int flags) : path_fd_(std::move(path_fd)), flags_(flags) {}
  CallerBackingFd(const CallerBackingFd&) = delete;
  CallerBackingFd& operator=(const CallerBackingFd&) = delete;

  // The open descriptor, opened now if it was not yet.
  SysResult<int> get();
  // The open descriptor, which the caller then owns (for a data path that holds its own).
  SysResult<UniqueFd> take();
  // A descriptor of the file that can be stat'ed and reopened through /proc, opened or not: the
  // O_PATH one until get() opened the file.
  int reference() const;
  // False while the file is left to its first use.
  bool opened() const;
  // The flags the descriptor was opened with, or will be (F_GETFL's view).
  SysResult<int> flags() const;

 private:
  mutable std::mutex mutex_;
  UniqueFd fd_;       // guarded; invalid until opened
  SharedFd path_fd_;  // null for a descriptor opened from the start
  int flags_ = 0;
};

}  // namespace flashdir::fs
