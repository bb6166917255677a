#include "fs/operations.h"

namespace flashdir::fs {
namespace {

void op_init(void* userdata, fuse_conn_info* conn) {
  // max_read= went to the kernel as a mount option; libfuse wants the connection to agree.
  const MountContext& context = *static_cast<const MountContext*>(userdata);
  if (context.options.max_read_bytes) conn->max_read = static_cast<unsigned>(*context.options.max_read_bytes);
  // The kernel, not the daemon, drops setuid/setgid bits and file capabilities on write,
  // truncate and chown: the daemon writes as root (CAP_FSETID), so the backing file system
  // would not drop them for it. The kernel's check costs a GETXATTR(security.capability) per
  // write, answered from memory (operations_xattr.cc).
  conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
  // No kernel writeback cache, in any write mode (doc/daemon.md "Kernel caches"): every write
  // reaches the cache engine when it is made, so that the size, mtime and O_APPEND offsets stay
  // the daemon's, and an acknowledged write is in the cache (which a restart recovers), not
  // in kernel memory lost with the daemon.
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  if ((conn->capable & FUSE_CAP_FLOCK_LOCKS) != 0) conn->want |= FUSE_CAP_FLOCK_LOCKS;
  // POSIX ACLs as on the backing directory: the kernel checks access against the backing's
  // ACLs (read through getxattr), not only its mode bits; without it an ACL entry that denies
  // a user was ignored, and one that grants was too. The ACLs themselves, and the mode they
  // keep in step, stay the backing file system's: setfacl reaches it as a setxattr.
  if ((conn->capable & FUSE_CAP_POSIX_ACL) != 0) conn->want |= FUSE_CAP_POSIX_ACL;
  // Modes arrive unmasked with the caller's umask beside them, which the daemon applies as the
  // backing file system would (creation_mode): not in a directory with a default ACL.
  if ((conn->capable & FUSE_CAP_DONT_MASK) != 0) conn->want |= FUSE_CAP_DONT_MASK;
  // Reads are answered from a buffer (the cache engine's), not spliced from a descriptor.
  conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
  // O_DIRECT requests reach the daemon one piece (max_write) after another, as buffered writes
  // do: with asynchronous direct I/O the kernel sends the pieces of one large write at once,
  // worker threads take them in any order, and an O_APPEND write, which the daemon places at
  // the file's end piece by piece, came out shuffled.
  conn->want &= ~FUSE_CAP_ASYNC_DIO;
  // Close-to-open (doc/daemon.md "Consistency") needs a file's attributes at its open, not
  // before each read: with attribute timeouts of 0 this capability sent a GETATTR before every
  // read(2), buffered or O_DIRECT, to catch a same-size rewrite behind the mount during an open.
  conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
}

}  // namespace

fuse_lowlevel_ops make_operations() {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.setattr = op_setattr;
  ops.readlink = op_readlink;
  ops.mknod = op_mknod;
  ops.mkdir = op_mkdir;
  ops.symlink = op_symlink;
  ops.link = op_link;
  ops.unlink = op_unlink;
  ops.rmdir = op_rmdir;
  ops.rename = op_rename;
  ops.statfs = op_statfs;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.readdirplus = op_readdirplus;
  ops.releasedir = op_releasedir;
  ops.fsyncdir = op_fsyncdir;
  ops.create = op_create;
  ops.open = op_open;
  ops.read = op_read;
  ops.write = op_write;
  ops.flush = op_flush;
  ops.release = op_release;
  ops.fsync = op_fsync;
  ops.fallocate = op_fallocate;
  ops.copy_file_range = op_copy_file_range;
  ops.lseek = op_lseek;
  ops.flock = op_flock;
  ops.setxattr = op_setxattr;
  ops.getxattr = op_getxattr;
  ops.listxattr = op_listxattr;
  ops.removexattr = op_removexattr;
  return ops;
}

}  // namespace flashdir::fs
