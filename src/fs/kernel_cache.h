// Close-to-open for what the kernel caches of a file's data: its pages of a regular file, its
// listing of a directory (doc/daemon.md "Consistency").
#pragma once

#include "fs/mount_context.h"

namespace flashdir::fs {

// Whether an open of `inode` (the kernel's `ino`, the backing object as `st` shows it) may keep what
// the kernel cached of it at earlier opens: yes when the backing object is the version it was
// at the previous open through the mount (file_version.h) and a read would not move its access
// time (the kernel's cache answers reads the daemon never sees, and the daemon marks the access
// time by its first read of each open); never under strict consistency. When the object
// changed, the kernel's attributes of it (its size, above all) are dropped too: they may be
// younger than the attribute timeout but are older than the change.
bool kernel_may_keep_cache(MountContext& context, Inode& inode, fuse_ino_t ino, const struct stat& st);

// Whether a read of `inode`'s object, found as `st`, would move its access time, by the mount's
// rule and the daemon's last read of it (file_version.h read_moves_atime; never on a backing
// mounted noatime).
bool read_would_move_atime(const MountContext& context, const Inode& inode, const struct stat& st);

}  // namespace flashdir::fs
