// Names, attributes and links: lookup, forget, getattr, setattr, readlink, mknod, mkdir,
// symlink, link, unlink, rmdir, rename, statfs.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

#include "fs/backing_stat.h"
#include "fs/credentials.h"
#include "fs/kept_attributes.h"
#include "fs/operations.h"

namespace flashdir::fs {
namespace {

// The kernel sends single path components; "." and ".." would step outside the object the
// daemon resolved (".." of the root leaves the backing tree), so they are never passed on.
bool is_dot_or_dotdot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

void reply_entry_or_forget(fuse_req_t req, MountContext& context, const fuse_entry_param& entry) {
  // An interrupted request's reply fails; the kernel then never counted the lookup.
  if (fuse_reply_entry(req, &entry) != 0) context.inodes->forget(inode_of(context, entry.ino), 1);
}

// mknod, mkdir and symlink: create as the caller, then look the new name up.
template <typename Create>
void make_entry(fuse_req_t req, fuse_ino_t parent_ino, const char* name, Create create) {
  MountContext& context = context_of(req);
  if (control_refuse(req, parent_ino, name)) return;
  if (is_dot_or_dotdot(name)) return reply_error(req, EEXIST);
  auto parent_fd = context.inodes->path_fd(inode_of(context, parent_ino));
  if (!parent_fd.is_ok()) return reply_error(req, parent_fd.error());
  {
    int error = 0;
    CallerCredentials as_caller(caller_of(req), error);
    if (error != 0) return reply_error(req, error);
    if (create((*parent_fd)->get()) != 0) return reply_error(req, errno);
  }
  note_name_changed(context, inode_of(context, parent_ino), name);
  auto entry = look_up(context, inode_of(context, parent_ino), name);
  if (!entry.is_ok()) return reply_error(req, entry.error());
  if (entry->ino == 0) return reply_error(req, ENOENT);  // removed again behind the mount
  reply_entry_or_forget(req, context, *entry);
}

// What the backing says of `inode` now, through its descriptor: its attributes as the backing
// file system has them (write-back data not yet in the file is not counted: stat_of does). An
// inode known by name only is opened now, and the stat that checked it is the answer.
SysResult<struct stat> backing_stat_of(MountContext& context, Inode& inode) {
  const std::int64_t asked_ns = realtime_ns();
  std::optional<struct statx> opened_by_name;
  auto fd = context.inodes->path_fd(inode, &opened_by_name);
  if (!fd.is_ok()) return Errno{fd.error()};
  struct stat st {};
  if (opened_by_name) {
    st = stat_from_statx(*opened_by_name);
  } else if (::fstatat((*fd)->get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return last_errno();
  }
  inode.note_attributes(st);
  note_backing_stat(context, inode, st, asked_ns);
  return st;
}

SysResult<struct stat> stat_of(MountContext& context, Inode& inode) {
  auto st = backing_stat_of(context, inode);
  if (st.is_ok()) correct_attributes(inode, *st);
  return st;
}

// The version of directory `dir` the consistency model still lets stand for it, or else a stat
// of it now; none if it cannot be stat'ed.
std::optional<Inode::DirectoryCheck> current_directory_check(MountContext& context, Inode& dir) {
  if (auto check = dir.directory_check(); check && realtime_ns() < check->until_ns) return check;
  if (!backing_stat_of(context, dir).is_ok()) return std::nullopt;
  return dir.directory_check();
}

// A name whose answer is past its bound, in a directory that still has the version it had when
// the name was asked (MetadataCache::find_expired): the directory's entries have not changed
// since, so the name still names the same object, and only that object's attributes are asked,
// by a stat of the descriptor the daemon holds, or, for an object it holds none of (after a
// restart), of one opened by the handle the answer kept (InodeTable::remember_named). That
// replaces a lookup of the name on the backing (and, on a FUSE or network store, the check of
// the directory that comes with it) with one stat: a walk over a tree past the bound (git
// status, find) asks each directory once and each file once. Nothing if the directory changed,
// or the object did since the answer (a name-only object's check) or cannot be reached: the
// caller then looks the name up.
std::optional<SysResult<fuse_entry_param>> look_up_in_unchanged_directory(MountContext& context, Inode& parent,
                                                                          const char* name) {
  MetadataCache& metadata = *context.metadata;
  const ObjectId parent_id{parent.dev(), parent.ino()};
  const std::uint64_t stamp = metadata.stamp();
  auto expired = metadata.find_expired(parent_id, name);
  if (!expired) return std::nullopt;
  auto check = current_directory_check(context, parent);
  if (!check || check->version != expired->parent_version) return std::nullopt;
  // What the directory's version vouches for holds as long as that version stands.
  const double seconds_left = 1e-9 * static_cast<double>(check->until_ns - realtime_ns());
  if (seconds_left <= 0) return std::nullopt;
  if (!expired->answer.present) {
    metadata.count_vouched();
    metadata.record_missing(parent_id, name, check->checked_ns, stamp, check->version);
    fuse_entry_param negative{};
    negative.entry_timeout = std::min(seconds_left, negative_entry_seconds(context));
    return negative;
  }
  Inode* known = context.inodes->remember_opened(expired->answer.attributes);
  if (known == nullptr) known = context.inodes->remember_named(parent, name, expired->answer.attributes, expired->answer.handle);
  if (known == nullptr) return std::nullopt;
  auto st = backing_stat_of(context, *known);
  if (!st.is_ok() || !(object_of(*st) == object_of(expired->answer.attributes))) {
    context.inodes->forget(*known, 1);
    return std::nullopt;
  }
  known->drop_kept_unless(*st);
  // Recorded as of the directory's check: what the name names is known no later than that.
  if (attributes_may_be_kept(*known))
    metadata.record(parent_id, name, *st, check->checked_ns, stamp, check->version, std::move(expired->answer.handle));
  metadata.count_vouched();
  return entry_for(context, *known, *st, seconds_left);
}

}  // namespace

// The metadata cache answers inside the consistency model's bound; past it, a name in a
// directory that has not changed since is answered by a stat of the object alone
// (look_up_in_unchanged_directory); otherwise the name is opened
// (O_PATH: no open reaches the backing file system) and the descriptor stat'ed, as stat(2)
// would, with the backing's own attribute cache deciding whether it asks again. On a network
// store that is one lookup and at most one getattr whether or not the inode table knows the
// object already; a stat by name first would add a second lookup for every object it does not
// know. The fresh
// descriptor also names what the kernel just looked up if an object it knew was deleted
// meanwhile and its inode number reused.
SysResult<fuse_entry_param> look_up(MountContext& context, Inode& parent, const char* name) {
  if (is_dot_or_dotdot(name)) return Errno{EINVAL};
  MetadataCache* metadata = context.metadata.get();
  const ObjectId parent_id{parent.dev(), parent.ino()};
  if (metadata != nullptr) {
    if (auto answer = metadata->find(parent_id, name, realtime_ns())) {
      if (!answer->present) {
        fuse_entry_param negative{};
        negative.entry_timeout = answer->seconds_left;
        return negative;
      }
      if (Inode* known = context.inodes->remember_named(parent, name, answer->attributes, std::move(answer->handle)))
        return entry_for(context, *known, answer->attributes, answer->seconds_left);
    }
    if (auto entry = look_up_in_unchanged_directory(context, parent, name)) return *entry;
  }
  // Read before the name is asked: a version of the directory that stands for its entries when
  // the name was asked (version_is_settled) lets a later lookup past the bound skip the name. A
  // directory never stat'ed yet (the root, above all) is stat'ed once for it.
  auto parent_check = parent.directory_check();
  if (!parent_check && metadata != nullptr && backing_stat_of(context, parent).is_ok())
    parent_check = parent.directory_check();
  const std::optional<DirectoryVersion> parent_version =
      parent_check && version_is_settled(parent_check->version, parent_check->checked_ns)
          ? std::optional(parent_check->version)
          : std::nullopt;
  // Taken before the backing is asked: the answer is at least this fresh, and a change through
  // the mount meanwhile voids it.
  const std::uint64_t stamp = metadata != nullptr ? metadata->stamp() : 0;
  const std::int64_t asked_ns = realtime_ns();
  auto parent_fd = context.inodes->path_fd(parent);
  if (!parent_fd.is_ok()) return Errno{parent_fd.error()};
  UniqueFd fd(::openat((*parent_fd)->get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int error = errno;
    if (error == ENOENT && metadata != nullptr) metadata->record_missing(parent_id, name, asked_ns, stamp, parent_version);
    return Errno{error};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return last_errno();
  // Taken from the descriptor before the table may keep another one of the object.
  HandleBytes handle = metadata != nullptr ? context.inodes->handle_to_keep(fd.get(), st) : HandleBytes{};
  Inode& known = context.inodes->remember(std::move(fd), st);
  known.note_attributes(st);
  note_backing_stat(context, known, st, asked_ns);
  known.drop_kept_unless(st);
  if (metadata != nullptr && attributes_may_be_kept(known))
    metadata->record(parent_id, name, st, asked_ns, stamp, parent_version, std::move(handle));
  return entry_for(context, known, st);
}

void correct_attributes(Inode& inode, struct stat& st) {
  if (!S_ISREG(st.st_mode)) return;
  inode.with_open_file([&](OpenFile& file) { file.correct_attributes(st); });
  const std::int64_t written_ns = inode.deferred_write_ns();
  if (written_ns == 0) return;
  // Data not written back yet has no blocks in the backing file: the file counts as fully
  // allocated meanwhile, so that a tool that takes a file with few blocks for sparse (cp, tar)
  // and copies only its data extents does not skip it.
  st.st_blocks = std::max<blkcnt_t>(st.st_blocks, (st.st_size + 511) / 512);
  // The backing file's times move when the data goes back; until then, the last write's.
  const timespec written{static_cast<time_t>(written_ns / 1'000'000'000), static_cast<long>(written_ns % 1'000'000'000)};
  const auto later = [](const timespec& a, const timespec& b) {
    return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
  };
  if (later(written, st.st_mtim)) st.st_mtim = written;
  if (later(written, st.st_ctim)) st.st_ctim = written;
}

fuse_entry_param entry_for(MountContext& context, Inode& inode, const struct stat& st, double seconds_left) {
  fuse_entry_param entry{};
  entry.ino = reinterpret_cast<fuse_ino_t>(&inode);
  entry.attr = st;
  correct_attributes(inode, entry.attr);
  entry.attr_timeout = std::min(kernel_cache_seconds(context, entry.attr), seconds_left);
  entry.entry_timeout = entry.attr_timeout;
  return entry;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  MountContext& context = context_of(req);
  context.counters.count(Op::lookup);
  if (control_lookup(req, parent, name)) return;
  auto entry = look_up(context, inode_of(context, parent), name);
  if (entry.is_ok() && entry->ino == 0) return static_cast<void>(fuse_reply_entry(req, &*entry));
  if (!entry.is_ok()) {
    // A missing name is remembered by the kernel as long as names are (a negative entry); a
    // name made through the mount replaces it at once.
    if (entry.error() == ENOENT && negative_entry_seconds(context) > 0 && !backing_gone(context)) {
      fuse_entry_param negative{};
      negative.entry_timeout = negative_entry_seconds(context);
      fuse_reply_entry(req, &negative);
      return;
    }
    return reply_error(req, entry.error());
  }
  if (&inode_of(context, entry->ino) == &context.inodes->root()) entry->ino = FUSE_ROOT_ID;
  reply_entry_or_forget(req, context, *entry);
}

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  MountContext& context = context_of(req);
  context.counters.count(Op::forget);
  if (!is_control_ino(ino)) context.inodes->forget(inode_of(context, ino), nlookup);
  fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  MountContext& context = context_of(req);
  for (size_t i = 0; i < count; ++i) {
    context.counters.count(Op::forget);
    if (!is_control_ino(forgets[i].ino)) context.inodes->forget(inode_of(context, forgets[i].ino), forgets[i].nlookup);
  }
  fuse_reply_none(req);
}

namespace {

// `call` on an open file's backing descriptor, opened now if need be: its result, or -1 with
// errno set if the descriptor could not be opened.
template <typename Call>
int with_backing_fd(OpenFile& file, Call call) {
  auto fd = file.backing_fd();
  if (!fd.is_ok()) {
    errno = fd.error();
    return -1;
  }
  return call(*fd);
}

void reply_attr(fuse_req_t req, MountContext& context, Inode& inode) {
  auto st = stat_of(context, inode);
  if (!st.is_ok()) return reply_error(req, st.error());
  fuse_reply_attr(req, &*st, kernel_cache_seconds(context, *st));
}

}  // namespace

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  MountContext& context = context_of(req);
  context.counters.count(Op::getattr);
  if (control_getattr(req, ino)) return;
  Inode& inode = inode_of(context, ino);
  if (auto kept = kept_answer(context, inode)) {
    context.counters.count_attributes_from_memory();
    fuse_reply_attr(req, &kept->st, kept->seconds_left);
    return;
  }
  const AttributeStamp stamp = stamp_attributes(context, inode);
  auto st = stat_of(context, inode);
  if (!st.is_ok()) return reply_error(req, st.error());
  keep_attributes(context, inode, *st, stamp);
  fuse_reply_attr(req, &*st, kernel_cache_seconds(context, *st));
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::setattr);
  if (control_refuse(req, ino)) return;
  Inode& inode = inode_of(context, ino);
  auto fd = context.inodes->path_fd(inode);
  if (!fd.is_ok()) return reply_error(req, fd.error());
  // The metadata cache forgets the attributes before any reply, also after a failure: part of
  // the change may have been made (a mode set, then a truncate refused).
  const auto fail = [&](int error) {
    note_attributes_changed(context, inode);
    reply_error(req, error);
  };
  const int path_fd = (*fd)->get();
  OpenFile* open_file = fi != nullptr ? reinterpret_cast<OpenFile*>(fi->fh) : nullptr;
  const std::string path = proc_path(path_fd);

  if ((to_set & FUSE_SET_ATTR_MODE) != 0) {
    const int result = open_file != nullptr ? with_backing_fd(*open_file, [&](int backing) { return ::fchmod(backing, attr->st_mode); })
                                            : ::chmod(path.c_str(), attr->st_mode);
    if (result != 0) return fail(errno);
  }
  if ((to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) != 0) {
    const uid_t uid = (to_set & FUSE_SET_ATTR_UID) != 0 ? attr->st_uid : static_cast<uid_t>(-1);
    const gid_t gid = (to_set & FUSE_SET_ATTR_GID) != 0 ? attr->st_gid : static_cast<gid_t>(-1);
    if (::fchownat(path_fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return fail(errno);
  }
  if ((to_set & FUSE_SET_ATTR_SIZE) != 0) {
    const auto size = static_cast<std::uint64_t>(attr->st_size);
    std::unique_lock truncating(inode.data_lock());
    auto result = open_file != nullptr
                      ? open_file->truncate(size)
                      : context.data->truncate_unopened(path_fd, relative_path_of(context, path_fd), size);
    if (!result.is_ok()) return fail(result.error());
  }
  if ((to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) != 0) {
    // Data written before must reach the backing file first, or its write-back would move the
    // times set here (cp -p sets them on the open file before it closes it).
    auto written = open_file != nullptr ? write_back(inode, *open_file) : write_back_open_file(inode);
    if (written.is_ok()) written = context.data->write_back_unopened(path_fd, relative_path_of(context, path_fd));
    if (!written.is_ok()) return fail(written.error());
    struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
    if ((to_set & FUSE_SET_ATTR_ATIME_NOW) != 0) {
      times[0].tv_nsec = UTIME_NOW;
    } else if ((to_set & FUSE_SET_ATTR_ATIME) != 0) {
      times[0] = attr->st_atim;
    }
    if ((to_set & FUSE_SET_ATTR_MTIME_NOW) != 0) {
      times[1].tv_nsec = UTIME_NOW;
    } else if ((to_set & FUSE_SET_ATTR_MTIME) != 0) {
      times[1] = attr->st_mtim;
    }
    // AT_EMPTY_PATH works on the O_PATH descriptor of any object, symlinks included.
    const int result = open_file != nullptr ? with_backing_fd(*open_file, [&](int backing) { return ::futimens(backing, times); })
                                            : ::utimensat(path_fd, "", times, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    if (result != 0) return fail(errno);
  }
  note_attributes_changed(context, inode);
  reply_attr(req, context, inode);
}

void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  MountContext& context = context_of(req);
  context.counters.count(Op::readlink);
  if (control_refuse(req, ino)) return;
  auto fd = context.inodes->path_fd(inode_of(context, ino));
  if (!fd.is_ok()) return reply_error(req, fd.error());
  char target[PATH_MAX + 1];
  const ssize_t n = ::readlinkat((*fd)->get(), "", target, sizeof target);
  if (n < 0) return reply_error(req, errno);
  if (static_cast<std::size_t>(n) == sizeof target) return reply_error(req, ENAMETOOLONG);
  target[n] = '\0';
  fuse_reply_readlink(req, target);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  context_of(req).counters.count(Op::mknod);
  const mode_t umask = fuse_req_ctx(req)->umask;
  make_entry(req, parent, name,
             [&](int dir_fd) { return ::mknodat(dir_fd, name, creation_mode(dir_fd, mode, umask), rdev); });
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  context_of(req).counters.count(Op::mkdir);
  const mode_t umask = fuse_req_ctx(req)->umask;
  make_entry(req, parent, name, [&](int dir_fd) { return ::mkdirat(dir_fd, name, creation_mode(dir_fd, mode, umask)); });
}

void op_symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  context_of(req).counters.count(Op::symlink);
  make_entry(req, parent, name, [&](int dir_fd) { return ::symlinkat(target, dir_fd, name); });
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  MountContext& context = context_of(req);
  context.counters.count(Op::link);
  if (control_refuse(req, ino) || control_refuse(req, new_parent, new_name)) return;
  Inode& inode = inode_of(context, ino);
  auto fd = context.inodes->path_fd(inode);
  if (!fd.is_ok()) return reply_error(req, fd.error());
  auto parent_fd = context.inodes->path_fd(inode_of(context, new_parent));
  if (!parent_fd.is_ok()) return reply_error(req, parent_fd.error());
  // A file with two names passes through the cache no more (EngineFileData), from its next
  // open on and in the opens it has now: each name's opens must see what the others wrote. No
  // open chooses the engine from the switch until the second name is there.
  {
    std::lock_guard choosing(inode.data_path_choice());
    if (auto moved = pass_through_open_files(inode); !moved.is_ok()) return reply_error(req, moved.error());
    // linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the /proc link of the O_PATH
    // descriptor names the same object (AT_SYMLINK_FOLLOW resolves the /proc link itself, not a
    // symlink the object may be).
    if (::linkat(AT_FDCWD, proc_path((*fd)->get()).c_str(), (*parent_fd)->get(), new_name, AT_SYMLINK_FOLLOW) != 0)
      return reply_error(req, errno);
  }
  note_attributes_changed(context, inode);
  note_name_changed(context, inode_of(context, new_parent), new_name);
  struct stat st {};
  if (::fstatat((*fd)->get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return reply_error(req, errno);
  context.inodes->add_lookup(inode);
  reply_entry_or_forget(req, context, entry_for(context, inode, st));
}

namespace {

std::string child_path(MountContext& context, int dir_fd, const char* name) {
  const std::string dir = relative_path_of(context, dir_fd);
  return dir.empty() ? std::string(name) : dir + "/" + name;
}

}  // namespace

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  MountContext& context = context_of(req);
  context.counters.count(Op::unlink);
  if (control_refuse(req, parent, name)) return;
  Inode& parent_inode = inode_of(context, parent);
  auto parent_fd = context.inodes->path_fd(parent_inode);
  if (!parent_fd.is_ok()) return reply_error(req, parent_fd.error());
  context.inodes->open_named(parent_inode, name);
  if (::unlinkat((*parent_fd)->get(), name, 0) != 0) return reply_error(req, errno);
  note_name_changed(context, parent_inode, name);
  context.data->unlinked(child_path(context, (*parent_fd)->get(), name));
  fuse_reply_err(req, 0);
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  MountContext& context = context_of(req);
  context.counters.count(Op::rmdir);
  if (control_refuse(req, parent, name)) return;
  Inode& parent_inode = inode_of(context, parent);
  auto parent_fd = context.inodes->path_fd(parent_inode);
  if (!parent_fd.is_ok()) return reply_error(req, parent_fd.error());
  context.inodes->open_named(parent_inode, name);
  if (::unlinkat((*parent_fd)->get(), name, AT_REMOVEDIR) != 0) return reply_error(req, errno);
  note_name_changed(context, parent_inode, name);
  fuse_reply_err(req, 0);
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent, const char* new_name,
               unsigned int flags) {
  MountContext& context = context_of(req);
  context.counters.count(Op::rename);
  if (control_refuse(req, parent, name) || control_refuse(req, new_parent, new_name)) return;
  Inode& from_inode = inode_of(context, parent);
  Inode& to_inode = inode_of(context, new_parent);
  auto from = context.inodes->path_fd(from_inode);
  if (!from.is_ok()) return reply_error(req, from.error());
  auto to = context.inodes->path_fd(to_inode);
  if (!to.is_ok()) return reply_error(req, to.error());
  // Both names are about to name other objects, or none.
  context.inodes->open_named(from_inode, name);
  context.inodes->open_named(to_inode, new_name);
  const std::string old_path = child_path(context, (*from)->get(), name);
  const std::string new_path = child_path(context, (*to)->get(), new_name);
  if (::renameat2((*from)->get(), name, (*to)->get(), new_name, flags) != 0) return reply_error(req, errno);
  note_name_changed(context, from_inode, name);
  note_name_changed(context, to_inode, new_name);
  context.data->renamed(old_path, new_path, (flags & RENAME_EXCHANGE) != 0);
  fuse_reply_err(req, 0);
}

void op_statfs(fuse_req_t req, fuse_ino_t ino) {
  MountContext& context = context_of(req);
  context.counters.count(Op::statfs);
  Inode& inode = is_control_ino(ino) ? context.inodes->root() : inode_of(context, ino);
  auto fd = context.inodes->path_fd(inode);
  if (!fd.is_ok()) return reply_error(req, fd.error());
  struct statvfs st {};
  if (::fstatvfs((*fd)->get(), &st) != 0) return reply_error(req, errno);
  fuse_reply_statfs(req, &st);
}

}  // namespace flashdir::fs
