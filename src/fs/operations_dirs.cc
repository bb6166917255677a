// Directories: opendir, readdir, readdirplus, releasedir, fsyncdir.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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

enum class Added { yes, gone, full };

// Adds one listed entry to a READDIR(PLUS) reply in `buffer`, to be continued at `next`; with
// plus, the entry carries its lookup. `gone`: removed since it was listed, left out, as a later
// listing would; `full`: it does not fit, nothing added.
SysResult<Added> add_entry(fuse_req_t req, MountContext& context, Inode& parent, bool plus, const char* name,
                           std::uint64_t ino, unsigned char type, off_t next, std::vector<char>& buffer,
                           std::size_t& used) {
  const std::size_t room = buffer.size() - used;
  if (plus) {
    auto entry = look_up_listed(context, parent, name);
    if (!entry.is_ok()) {
      if (entry.error() == ENOENT) return Added::gone;
      return Errno{entry.error()};
    }
    const std::size_t size = fuse_add_direntry_plus(req, buffer.data() + used, room, name, &*entry, next);
    if (size > room) {
      context.inodes->forget(inode_of(context, entry->ino), 1);  // not sent: the kernel will not count it
      return Added::full;
    }
    used += size;
    return Added::yes;
  }
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = static_cast<mode_t>(type) << 12;
  const std::size_t size = fuse_add_direntry(req, buffer.data() + used, room, name, &st, next);
  if (size > room) return Added::full;
  used += size;
  return Added::yes;
}

// From a listing the metadata cache kept: entry i continues at offset i + 1.
int read_kept_listing(fuse_req_t req, MountContext& context, Inode& parent, const DirectoryListing& listing,
                      off_t offset, bool plus, std::vector<char>& buffer, std::size_t& used) {
  for (auto i = static_cast<std::size_t>(std::max<off_t>(offset, 0)); i < listing.entries.size(); ++i) {
    const ListedEntry& entry = listing.entries[i];
    auto added = add_entry(req, context, parent, plus, entry.name.c_str(), entry.ino, entry.type,
                           static_cast<off_t>(i + 1), buffer, used);
    if (!added.is_ok()) return added.error();
    if (*added == Added::full) break;
  }
  return 0;
}

// Opens `handle`'s stream of the directory `dir` is open on; an errno, or 0.
int open_stream(DirHandle& handle, const UniqueFd& dir) {
  const int dir_fd = ::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return errno;
  handle.stream = ::fdopendir(dir_fd);
  if (handle.stream == nullptr) {
    const int error = errno;
    ::close(dir_fd);
    return error;
  }
  handle.unopened.reset();
  return 0;
}

// From the backing directory's stream, recording what it lists if the handle records.
int read_stream(fuse_req_t req, MountContext& context, Inode& parent, bool at_root, DirHandle& handle, off_t offset,
                bool plus, std::vector<char>& buffer, std::size_t& used) {
  if (handle.stream == nullptr) {
    if (const int error = open_stream(handle, *handle.unopened); error != 0) return error;
  }
  if (offset != handle.offset) {
    ::seekdir(handle.stream, offset);
    handle.offset = offset;
    handle.recording.reset();  // no longer read in order from the start
  }
  int error = 0;
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(handle.stream);
    if (entry == nullptr) {
      error = errno;
      if (error == 0 && handle.recording && context.metadata != nullptr) {
        DirHandle::Recording& done = *handle.recording;
        context.metadata->record_listing(done.dir, DirectoryListing{done.version, std::move(done.entries)}, done.stamp);
      }
      handle.recording.reset();
      break;
    }
    // The control directory shadows a backing entry of its name at the root.
    if (is_dot_or_dotdot(entry->d_name) || (at_root && std::strcmp(entry->d_name, kControlDirName) == 0)) {
      handle.offset = entry->d_off;
      continue;
    }
    auto added = add_entry(req, context, parent, plus, entry->d_name, entry->d_ino, entry->d_type, entry->d_off,
                           buffer, used);
    if (!added.is_ok()) {
      error = added.error();
      handle.recording.reset();
      break;
    }
    if (*added == Added::full) break;
    if (*added == Added::gone) handle.recording.reset();  // the directory changed while listed
    if (*added == Added::yes && handle.recording)
      handle.recording->entries.push_back({entry->d_name, entry->d_ino, entry->d_type});
    handle.offset = entry->d_off;
  }
  // The stream read one entry past the last one sent when the buffer filled; the next
  // readdir continues at the first entry not sent.
  ::seekdir(handle.stream, handle.offset);
  return error;
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
    Inode& parent = inode_of(context, ino);
    error = handle.listing != nullptr ? read_kept_listing(req, context, parent, *handle.listing, offset, plus, buffer, used)
                                      : read_stream(req, context, parent, ino == FUSE_ROOT_ID, handle, offset, plus, buffer, used);
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
  const std::int64_t stat_ns = realtime_ns();  // no later than the stat below
  const std::uint64_t stamp = context.metadata != nullptr ? context.metadata->stamp() : 0;
  std::optional<struct statx> opened_by_name;  // the stat that checked a directory known by name only
  auto fd = context.inodes->path_fd(inode, &opened_by_name);
  if (!fd.is_ok()) return reply_error(req, fd.error());
  // The directory's version: a stat the consistency model still lets stand for it (listings,
  // like names, change behind the mount within its bound; NFS's attribute cache does the same),
  // or else a stat now, before anything of it is read (the check of a directory known by name
  // only has just made one). A kept listing is served only for that version, and one read now is
  // recorded for it: a listing read after the stat holds every name the version had.
  std::optional<struct stat> st;
  std::int64_t seen_ns = stat_ns;  // when the backing showed `st`
  const std::optional<Inode::DirectoryCheck> check = opened_by_name ? std::nullopt : inode.directory_check();
  if (check && stat_ns < check->until_ns) {
    st = check->st;
    seen_ns = check->checked_ns;
  } else if (auto stat = opened_by_name ? SysResult<struct statx>(*opened_by_name)
                                        : statx_of((*fd)->get(), STATX_BASIC_STATS, AT_STATX_FORCE_SYNC);
             stat.is_ok()) {
    st = stat_from_statx(*stat);
    note_backing_stat(context, inode, *st, stat_ns);
  }
  MetadataCache* metadata = st ? context.metadata.get() : nullptr;
  const DirectoryVersion version = st ? DirectoryVersion::of(*st) : DirectoryVersion{};
  auto handle = std::make_unique<DirHandle>();
  // A listing that moves the directory's access time on the backing is read from it: the
  // metadata cache's copy would leave the access time where it was.
  const bool atime_moves = st && read_would_move_atime(context, inode, *st);
  if (metadata != nullptr && !atime_moves) handle->listing = metadata->find_listing(object_of(*st), version);
  // The kernel keeps the listing it read (cache_readdir) until the directory changes through
  // the mount, its modification time moves in the attributes it refreshes, or an open finds it
  // changed behind the mount (close-to-open, as for a file's pages).
  fi->cache_readdir = context.options.consistency == Consistency::strict ? 0 : 1;
  fi->keep_cache = st && kernel_may_keep_cache(context, inode, ino, *st) ? 1 : 0;
  if (handle->listing == nullptr) {
    if (fi->keep_cache) {
      handle->unopened = *fd;
    } else {
      if (const int error = open_stream(*handle, **fd); error != 0) return reply_error(req, error);
      // The kernel lists it through the daemon, which lists the backing directory: a read of
      // this version from now on (file_version.h ReadMark).
      if (st) inode.note_read({version_of(*st), stat_ns});
    }
    if (metadata != nullptr && version_is_settled(version, seen_ns))
      handle->recording = DirHandle::Recording{object_of(*st), version, stamp, {}};
  }
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
  DirHandle& handle = dir_handle(fi);
  if (handle.stream != nullptr) {
    const int fd = ::dirfd(handle.stream);
    if ((datasync != 0 ? ::fdatasync(fd) : ::fsync(fd)) != 0) return reply_error(req, errno);
    return static_cast<void>(fuse_reply_err(req, 0));
  }
  // Served from a kept listing: the directory itself was not opened.
  MountContext& context = context_of(req);
  auto path = context.inodes->path_fd(inode_of(context, ino));
  if (!path.is_ok()) return reply_error(req, path.error());
  const int fd = ::openat((*path)->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return reply_error(req, errno);
  const int synced = datasync != 0 ? ::fdatasync(fd) : ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) return reply_error(req, error);
  fuse_reply_err(req, 0);
}

}  // namespace flashdir::fs
