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
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const AtimeMode atime = context.backing_noatime ? AtimeMode::noatime : atime_mode(context.options);
  return !read_moves_atime(st, atime, now);
}

}  // namespace flashdir::fs
