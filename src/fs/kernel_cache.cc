#include "fs/kernel_cache.h"

#include <sys/stat.h>
#include <time.h>

#include "fs/file_version.h"

namespace flashdir::fs {

bool kernel_may_keep_cache(MountContext& context, Inode& inode, fuse_ino_t ino, const struct stat& st) {
  if (context.options.consistency == Consistency::strict) return false;
  if (!inode.unchanged_since_last_open(version_of(st))) {
    if (context.session != nullptr) fuse_lowlevel_notify_inval_inode(context.session, ino, -1, 0);
    return false;
  }
  return !read_would_move_atime(context, inode, st);
}

bool read_would_move_atime(const MountContext& context, const Inode& inode, const struct stat& st) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return !context.backing_noatime && read_moves_atime(st, atime_mode(context.options), now, inode.read_mark());
}

}  // namespace flashdir::fs
