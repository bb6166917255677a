// Directories: opendir, readdir, readdirplus, releasedir, fsyncdir.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "fs/backing_stat.h"
#include "fs/kernel_cache.h"
#include "fs/operations.h"

namespace flashdir::fs {
namespace {

DirHandle& dir_handle(fuse_file_info* fi) { return OpenHandles<DirHandle>::of(fi->fh); }

bool is_dot_or_dotdot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// readdirplus's lookup of a name readdir just listed. A missing name the metadata cache still
// remembers (made behind the mount since) is asked of the backing again: listed without an
// entry, it would look removed.
SysResult<fuse_entry_param> look_up_listed(MountContext& context, Inode& parent, const char* name) {
  auto entry = look_up(context, parent, name);
  if (!entry.is_ok() || entry->ino != 0) return entry;
  note_name_changed(context, parent, name);
  entry = look_up(context, parent, name);
  if (entry.is_ok() && entry->ino == 0) return Errno{ENOENT};
  return entry;
}

void read_directory(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi, bool plus) {
  MountContext& context = context_of(req);
  context.counters.count(Op::readdir);
  if (control_readdir(req, ino, size, offset, plus)) return;
  DirHandle& handle = dir_handle(fi);
  std::vector<char> buffer(size);
  std::size_t used = 0;
  int error = 0;
  {
    std::lock_guard lock(handle.mutex);
    if (offset != handle.offset) {
      ::seekdir(handle.stream, offset);
      handle.offset = offset;
    }
    const bool at_root = ino == FUSE_ROOT_ID;
    Inode& parent = inode_of(context, ino);
    while (true) {
      errno = 0;
      const dirent* entry = ::readdir(handle.stream);
      if (entry == nullptr) {
        error = errno;
        break;
      }
      // The control directory shadows a backing entry of its name at the root.
      if (is_dot_or_dotdot(entry->d_name) || (at_root && std::strcmp(entry->d_name, kControlDirName) == 0)) {
        handle.offset = entry->d_off;
        continue;
      }
      std::size_t entry_size = 0;
      if (plus) {
        auto entry_param = look_up_listed(context, parent, entry->d_name);
        if (!entry_param.is_ok()) {
          // Removed since readdir saw it: leave it out, as a later readdir would.
          if (entry_param.error() == ENOENT) {
            handle.offset = entry->d_off;
            continue;
          }
          error = entry_param.error();
          break;
        }
        entry_size = fuse_add_direntry_plus(req, buffer.data() + used, size - used, entry->d_name, &*entry_param, entry->d_off);
        if (entry_size > size - used) {
          context.inodes->forget(inode_of(context, entry_param->ino), 1);  // not sent: the kernel will not count it
          break;
        }
      } else {
        struct stat st {};
        st.st_ino = entry->d_ino;
        st.st_mode = static_cast<mode_t>(entry->d_type) << 12;
        entry_size = fuse_add_direntry(req, buffer.data() + used, size - used, entry->d_name, &st, entry->d_off);
        if (entry_size > size - used) break;
      }
      used += entry_size;
      handle.offset = entry->d_off;
    }
    // The stream read one entry past the last one sent when the buffer filled; the next
    // readdir continues at the first entry not sent.
    ::seekdir(handle.stream, handle.offset);
  }
  // Entries already in the buffer carry lookups the kernel must see; an error is reported
  // only if nothing was collected.
  if (error != 0 && used == 0) return reply_error(req, error);
  fuse_reply_buf(req, buffer.data(), used);
}

}  // namespace

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::opendir);
  if (control_opendir(req, ino, fi)) return;
  // A removed directory lists as empty; when it is the backing root, the mount is broken and
  // callers must hear it.
  if (ino == FUSE_ROOT_ID && backing_gone(context)) return reply_error(req, EIO);
  Inode& inode = inode_of(context, ino);
  std::optional<struct statx> opened_by_name;  // the stat that checked a directory known by name only
  auto fd = context.inodes->path_fd(inode, &opened_by_name);
  if (!fd.is_ok()) return reply_error(req, fd.error());
  const int dir_fd = ::openat((*fd)->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return reply_error(req, errno);
  auto handle = std::make_unique<DirHandle>();
  handle->stream = ::fdopendir(dir_fd);
  if (handle->stream == nullptr) {
    const int error = errno;
    ::close(dir_fd);
    return reply_error(req, error);
  }
  // The kernel keeps the listing it read (cache_readdir) until the directory changes through
  // the mount, its modification time moves in the attributes it refreshes, or an open finds it
  // changed behind the mount (close-to-open, as for a file's pages).
  fi->cache_readdir = context.options.consistency == Consistency::strict ? 0 : 1;
  // The directory as it is now: the check of a directory known by name only has just stat'ed it.
  struct stat st {};
  bool known = true;
  if (opened_by_name) {
    st = stat_from_statx(*opened_by_name);
  } else {
    known = ::fstat(dir_fd, &st) == 0;
  }
  fi->keep_cache = known && kernel_may_keep_cache(context, inode, ino, st) ? 1 : 0;
  fi->fh = context.dirs.add(std::move(handle));
  if (fuse_reply_open(req, fi) != 0) context.dirs.take(fi->fh);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
  read_directory(req, ino, size, offset, fi, false);
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
  read_directory(req, ino, size, offset, fi, true);
}

void op_releasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::releasedir);
  if (!is_control_ino(ino)) context.dirs.take(fi->fh);
  fuse_reply_err(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  context_of(req).counters.count(Op::fsyncdir);
  if (is_control_ino(ino)) return static_cast<void>(fuse_reply_err(req, 0));
  const int fd = ::dirfd(dir_handle(fi).stream);
  if ((datasync != 0 ? ::fdatasync(fd) : ::fsync(fd)) != 0) return reply_error(req, errno);
  fuse_reply_err(req, 0);
}

}  // namespace flashdir::fs
