#include "fs/backing_stat.h"

#include <sys/sysmacros.h>

namespace flashdir::fs {

SysResult<struct statx> statx_of(int fd, unsigned int mask, int flags) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | flags, mask, &stx) != 0) return last_errno();
  return stx;
}

struct stat stat_from_statx(const struct statx& stx) {
  struct stat st {};
  st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st.st_ino = stx.stx_ino;
  st.st_mode = stx.stx_mode;
  st.st_nlink = stx.stx_nlink;
  st.st_uid = stx.stx_uid;
  st.st_gid = stx.stx_gid;
  st.st_rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
  st.st_size = static_cast<off_t>(stx.stx_size);
  st.st_blksize = stx.stx_blksize;
  st.st_blocks = static_cast<blkcnt_t>(stx.stx_blocks);
  st.st_atim = {stx.stx_atime.tv_sec, stx.stx_atime.tv_nsec};
  st.st_mtim = {stx.stx_mtime.tv_sec, stx.stx_mtime.tv_nsec};
  st.st_ctim = {stx.stx_ctime.tv_sec, stx.stx_ctime.tv_nsec};
  return st;
}

}  // namespace flashdir::fs
