// Extended attributes, passed through by the /proc link of the inode's O_PATH descriptor.
// security.capability is answered from memory while it is known absent: the kernel asks for it
// before every write(2) to decide whether to drop file capabilities (doc/daemon.md).
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cstring>
#include <vector>

#include "fs/operations.h"

namespace flashdir::fs {
namespace {

constexpr const char* kCapabilityName = "security.capability";

bool is_capability(const char* name) { return std::strcmp(name, kCapabilityName) == 0; }

// Replies to a get/list call: the size when the caller asked for it (size 0), else the bytes.
void reply_sized(fuse_req_t req, ssize_t length, const std::vector<char>& value, size_t size) {
  if (size == 0) {
    fuse_reply_xattr(req, static_cast<size_t>(length));
  } else {
    fuse_reply_buf(req, value.data(), static_cast<size_t>(length));
  }
}

}  // namespace

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  MountContext& context = context_of(req);
  context.counters.count(Op::getxattr);
  if (is_control_ino(ino)) return static_cast<void>(fuse_reply_err(req, ENODATA));
  Inode& inode = inode_of(context, ino);
  if (is_capability(name) && inode.capability_known_absent()) {
    context.counters.count_capability_from_memory();
    return static_cast<void>(fuse_reply_err(req, ENODATA));
  }
  auto fd = context.inodes->path_fd(inode);
  if (!fd.is_ok()) return reply_error(req, fd.error());
  const std::string path = proc_path((*fd)->get());
  std::vector<char> value(size);
  const ssize_t length = ::getxattr(path.c_str(), name, size == 0 ? nullptr : value.data(), size);
  if (length < 0) {
    const int error = errno;
    struct stat st {};
    if (is_capability(name) && error == ENODATA && ::fstatat((*fd)->get(), "", &st, AT_EMPTY_PATH) == 0)
      inode.capability_absent_at(st);
    return reply_error(req, error);
  }
  reply_sized(req, length, value, size);
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  MountContext& context = context_of(req);
  context.counters.count(Op::listxattr);
  if (is_control_ino(ino)) return size == 0 ? static_cast<void>(fuse_reply_xattr(req, 0)) : static_cast<void>(fuse_reply_buf(req, nullptr, 0));
  auto fd = context.inodes->path_fd(inode_of(context, ino));
  if (!fd.is_ok()) return reply_error(req, fd.error());
  std::vector<char> names(size);
  const ssize_t length = ::listxattr(proc_path((*fd)->get()).c_str(), size == 0 ? nullptr : names.data(), size);
  if (length < 0) return reply_error(req, errno);
  reply_sized(req, length, names, size);
}

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags) {
  MountContext& context = context_of(req);
  context.counters.count(Op::setxattr);
  if (control_refuse(req, ino)) return;
  Inode& inode = inode_of(context, ino);
  auto fd = context.inodes->path_fd(inode);
  if (!fd.is_ok()) return reply_error(req, fd.error());
  if (is_capability(name)) inode.capability_may_exist();
  if (::setxattr(proc_path((*fd)->get()).c_str(), name, value, size, flags) != 0) return reply_error(req, errno);
  note_attributes_changed(context, inode);  // its change time, and an ACL's mode
  fuse_reply_err(req, 0);
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  MountContext& context = context_of(req);
  context.counters.count(Op::removexattr);
  if (control_refuse(req, ino)) return;
  auto fd = context.inodes->path_fd(inode_of(context, ino));
  if (!fd.is_ok()) return reply_error(req, fd.error());
  if (::removexattr(proc_path((*fd)->get()).c_str(), name) != 0) return reply_error(req, errno);
  note_attributes_changed(context, inode_of(context, ino));
  fuse_reply_err(req, 0);
}

}  // namespace flashdir::fs
