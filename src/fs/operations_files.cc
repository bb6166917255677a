// Regular files: create, open, read, write, flush, release, fsync, fallocate,
// copy_file_range, lseek, flock. The bytes go through the mount's FileData.
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

#include "fs/backing_stat.h"
#include "fs/credentials.h"
#include "fs/kept_attributes.h"
#include "fs/kernel_cache.h"
#include "fs/operations.h"

namespace flashdir::fs {
namespace {

OpenFile& open_file(fuse_file_info* fi) { return OpenHandles<OpenFile>::of(fi->fh); }

// Flags for the backing open. O_DIRECT is not passed on: the daemon's buffers are not
// aligned for it, the backing file system may not support it, and what the caller asked for
// (no kernel page cache on the mount) the kernel gives by itself (set_handle_flags). O_CREAT
// and O_EXCL were handled by create; O_NOFOLLOW is added: the daemon never follows a symlink.
int backing_flags(int flags) {
  return (flags & ~(O_DIRECT | O_CREAT | O_EXCL | O_NOCTTY)) | O_NOFOLLOW | O_CLOEXEC;
}

// Close-to-open for the kernel's pages of the file (kernel_cache.h), `st` the backing file as
// the open left it. An O_DIRECT open gets no
// direct_io: the kernel's own O_DIRECT path (fuse_direct_IO) already sends that descriptor's
// reads and writes to the daemon whatever their alignment, writes back the page cache's dirty
// pages of a range before reading it and drops them after writing it, and leaves mmap alone,
// where a direct_io handle refuses a shared map (ENODEV: libfuse 3.14 cannot allow one).
void set_handle_flags(MountContext& context, Inode& inode, const struct stat& st, fuse_file_info* fi, fuse_ino_t ino) {
  fi->keep_cache = kernel_may_keep_cache(context, inode, ino, st) ? 1 : 0;
}

// True if an open of `inode` other than `except` bypasses the cache (`bypassing`), or goes
// through it.
bool other_open(Inode& inode, const OpenFile* except, bool bypassing) {
  bool found = false;
  inode.for_each_open_file([&](OpenFile& file) { found = found || (&file != except && file.bypasses_cache() == bypassing); });
  return found;
}

// The stamp of the inode's attributes taken when the open began, before any stat of it, and a
// stat made for the open before finish_open (opening an inode known by name only checks it so),
// past the backing's attribute cache; or, within readmostly's bound, the one an earlier open
// (or a check made ahead, name_opener.h) kept (`kept`: the backing is asked nothing, and the
// answer is not kept again).
struct StatForOpen {
  AttributeStamp stamp;
  std::optional<struct statx> fresh;
  bool kept = false;
};

// Hands the caller's backing file (opened, or left to its first use) to the FileData and
// replies with the handle; the inode knows its open files until their release.
template <typename Reply>
void finish_open(fuse_req_t req, MountContext& context, Inode& inode, fuse_ino_t ino,
                 std::unique_ptr<CallerBackingFd> backing, fuse_file_info* fi, Reply reply,
                 const StatForOpen& made) {
  std::lock_guard choosing(inode.data_path_choice());
  OpenRequest request;
  request.relative_path = relative_path_of(context, backing->reference());
  // One stat of the file serves the data path and the kernel's cache (a round trip less on a
  // network store), unless this open changes the file below. A file not opened is stat'ed past
  // any attribute cache of the backing file system's own (NFS revalidates at open, not at stat),
  // so that close-to-open holds as an open of it would; under readmostly, within the bound, the
  // stat an earlier open kept serves instead (the engine asks again where it finds a change).
  const bool reuse = made.fresh && !backing->opened();
  const bool from_memory = reuse && made.kept;
  if (from_memory) context.counters.count_open_from_memory();
  auto attributes = reuse ? SysResult<struct statx>(*made.fresh)
                          : statx_of(backing->reference(), STATX_BASIC_STATS | STATX_BTIME,
                                     backing->opened() ? 0 : AT_STATX_FORCE_SYNC);
  if (!attributes.is_ok()) return reply_error(req, attributes.error());
  request.attributes = *attributes;
  struct stat st = stat_from_statx(*attributes);
  request.backing = std::move(backing);
  request.flags = fi->flags;
  // One data path per inode: an open beside one that bypasses the cache bypasses it too, and
  // the first open that bypasses it (a second name made behind the mount) takes the others
  // with it.
  request.bypass_cache = other_open(inode, nullptr, true);
  auto file = context.data->open(std::move(request));
  if (!file.is_ok()) return reply_error(req, file.error());
  bool changed = (fi->flags & O_TRUNC) != 0;
  if ((*file)->bypasses_cache() && other_open(inode, nullptr, false)) {
    if (auto moved = pass_through_open_files(inode); !moved.is_ok()) return reply_error(req, moved.error());
    changed = true;  // the other opens' pages went back into the file
    // Their pages went back into a file this open(2) had emptied.
    if ((fi->flags & O_TRUNC) != 0) {
      if (auto emptied = (*file)->truncate(0); !emptied.is_ok()) return reply_error(req, emptied.error());
    }
  }
  if (changed) {
    auto changed_fd = (*file)->backing_fd();
    if (!changed_fd.is_ok()) return reply_error(req, changed_fd.error());
    if (::fstat(*changed_fd, &st) != 0) return reply_error(req, errno);
  }
  set_handle_flags(context, inode, st, fi, ino);
  // No first read marks an access time that a read would not move (a backing round trip).
  const bool atime_stays = !read_would_move_atime(context, inode, st);
  if (atime_stays) (*file)->access_time_unmoved();
  OpenFile* opened = file->get();
  fi->fh = context.files.add(std::move(*file));
  inode.add_open_file(opened);
  // The kernel's fstat after its first read of the file is answered from this stat (a read
  // that moves the access time forgets it again; a change this open made goes just below).
  if (!changed && !from_memory) keep_attributes(context, inode, st, made.stamp, &*attributes);
  // The metadata cache keeps nothing of a file open for writing (attributes_may_be_kept); what
  // it had goes now. So does what it had of a file this open changed.
  if (opened->opened_for_writing() || changed) note_attributes_changed(context, inode);
  // A link made meanwhile took the inode's other opens off the cache without this one.
  if (!opened->bypasses_cache() && other_open(inode, opened, true)) {
    if (auto moved = pass_through_open_files(inode); !moved.is_ok()) {
      inode.remove_open_file(opened);
      context.files.take(fi->fh);
      return reply_error(req, moved.error());
    }
  }
  if (reply() != 0) {
    inode.remove_open_file(opened);
    context.files.take(fi->fh);
  }
}

// A caller's read moves the file's access time as a read of the backing file itself would. The
// cache reads the backing file O_NOATIME (its misses, read-ahead and write-back fills are not the
// caller's reads) and a hit reads no backing file at all, so the first read of each open reads
// one byte through the caller's own backing descriptor, which carries the caller's O_NOATIME;
// the backing file system applies its relatime or strictatime rule to it. A noatime mount
// skips it; an open that bypasses the cache reads that descriptor anyway. The kernel drops its
// copy of the access time after reading pages from the daemon, but not after copy_file_range:
// it is told.
void note_access(MountContext& context, fuse_ino_t ino, OpenFile& file) {
  if (file.bypasses_cache() || atime_mode(context.options) == AtimeMode::noatime || !file.first_read()) return;
  // What it returns does not matter to the caller, whose read is served: the access time is a
  // side effect, and a read that made it marks the inode (file_version.h ReadMark).
  auto fd = file.backing_fd();
  if (!fd.is_ok()) return;
  Inode& inode = inode_of(context, ino);
  // A version stat'ed before the read, and a time no later than it: what the read marks.
  const ReadMark mark{inode.last_open_version(), realtime_ns()};
  std::uint8_t byte = 0;
  const ssize_t n = ::pread(*fd, &byte, 1, 0);
  const int flags = ::fcntl(*fd, F_GETFL);
  if (n >= 0 && flags >= 0 && (flags & O_NOATIME) == 0) inode.note_read(mark);
  inode.attributes_changed();  // its access time, as kept (kept_attributes.h)
  if (context.session != nullptr) fuse_lowlevel_notify_inval_inode(context.session, ino, -1, 0);
}

// One of `file`'s write-backs (OpenFile::write_back or write_back_at_close): the backing file
// then has the writes made so far, or under a write-back delay their size, the bytes following.
SysResult<bool> write_back_by(Inode& inode, OpenFile& file, SysResult<bool> (OpenFile::*call)()) {
  const std::int64_t written_ns = inode.deferred_write_ns();
  auto result = (file.*call)();
  if (result.is_ok()) inode.deferred_write_written_back(written_ns);
  return result;
}

}  // namespace

SysResult<bool> write_back(Inode& inode, OpenFile& file) { return write_back_by(inode, file, &OpenFile::write_back); }

SysResult<bool> pass_through_open_files(Inode& inode) {
  std::unique_lock changing(inode.data_lock());
  SysResult<bool> result = true;
  const std::int64_t written_ns = inode.deferred_write_ns();
  inode.for_each_open_file([&](OpenFile& file) {
    if (result.is_ok()) result = file.write_back_keeping_error();
  });
  if (result.is_ok()) inode.deferred_write_written_back(written_ns);
  inode.for_each_open_file([&](OpenFile& file) {
    if (result.is_ok()) result = file.prepare_pass_through();
  });
  if (!result.is_ok()) return result;
  inode.for_each_open_file([](OpenFile& file) { file.pass_through(); });
  return true;
}


SysResult<bool> write_back_open_file(Inode& inode) {
  SysResult<bool> result = true;
  inode.with_open_file([&](OpenFile& file) { result = write_back(inode, file); });
  return result;
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::create);
  if (control_refuse(req, parent, name)) return;
  Inode& parent_inode = inode_of(context, parent);
  auto parent_fd = context.inodes->path_fd(parent_inode);
  if (!parent_fd.is_ok()) return reply_error(req, parent_fd.error());
  UniqueFd fd;
  {
    int error = 0;
    CallerCredentials as_caller(caller_of(req), error);
    if (error != 0) return reply_error(req, error);
    const int dir_fd = (*parent_fd)->get();
    fd = UniqueFd(::openat(dir_fd, name, backing_flags(fi->flags) | O_CREAT | (fi->flags & O_EXCL),
                           creation_mode(dir_fd, mode, fuse_req_ctx(req)->umask)));
    if (!fd.valid()) return reply_error(req, errno);
  }
  note_name_changed(context, parent_inode, name);
  UniqueFd path_fd(::open(proc_path(fd.get()).c_str(), O_PATH | O_CLOEXEC));
  struct stat st {};
  if (!path_fd.valid() || ::fstat(fd.get(), &st) != 0) return reply_error(req, errno);
  Inode& inode = context.inodes->remember(std::move(path_fd), st);
  const fuse_entry_param entry = entry_for(context, inode, st);
  bool entry_sent = false;
  finish_open(req, context, inode, ino_of(context, inode), std::make_unique<CallerBackingFd>(std::move(fd)), fi, [&] {
    const int result = fuse_reply_create(req, &entry, fi);
    entry_sent = result == 0;
    return result;
  }, StatForOpen{stamp_attributes(context, inode), std::nullopt});
  // The kernel holds the lookup only if the entry reached it (not if finish_open failed, or the
  // caller was interrupted). Given back once finish_open is done with the inode: the last
  // lookup's forget frees it.
  if (!entry_sent) context.inodes->forget(inode, 1);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::open);
  if (control_open(req, ino, fi)) return;
  Inode& inode = inode_of(context, ino);
  StatForOpen made{stamp_attributes(context, inode), std::nullopt};
  if (context.name_opener != nullptr) context.name_opener->open_siblings_soon(inode);
  auto path_fd = context.inodes->path_fd(inode, &made.fresh);
  if (!path_fd.is_ok()) return reply_error(req, path_fd.error());
  if (!made.fresh) {
    made.fresh = kept_open_answer(context, inode);
    made.kept = made.fresh.has_value();
  }
  // A reader whose data the cache serves opens the backing file when first needed
  // (caller_backing_fd.h); the kernel has checked its access already (default_permissions).
  const bool reader = (fi->flags & O_ACCMODE) == O_RDONLY && (fi->flags & O_TRUNC) == 0;
  auto backing = std::make_unique<CallerBackingFd>(std::move(*path_fd), backing_flags(fi->flags));
  if (!reader || !context.data->opens_readers_on_use()) {
    if (auto opened = backing->get(); !opened.is_ok()) return reply_error(req, opened.error());
  }
  finish_open(req, context, inode, ino, std::move(backing), fi, [&] { return fuse_reply_open(req, fi); }, made);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::read);
  if (control_read(req, ino, size, offset, fi)) return;
  // One buffer per worker thread, grown to the largest read seen (the kernel's max_read).
  thread_local std::vector<std::uint8_t> buffer;
  if (buffer.size() < size) buffer.resize(size);
  OpenFile& file = open_file(fi);
  // The pages a miss brought in are admitted after the reply (cache::DeferredFill), under the
  // data lock still: the reader's next request meets the backing sooner.
  std::shared_lock reading(inode_of(context, ino).data_lock());
  cache::DeferredFill fill;
  auto n = file.read(static_cast<std::uint64_t>(offset), ByteSpan(buffer.data(), size), &fill);
  if (!n.is_ok()) return reply_error(req, n.error());
  note_access(context, ino, file);
  context.counters.count_file_read(*n, file.bypasses_cache());
  fuse_reply_buf(req, reinterpret_cast<const char*>(buffer.data()), *n);
  fill.run();
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t offset, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::write);
  if (control_write(req, ino, size)) return;
  Inode& inode = inode_of(context, ino);
  OpenFile& file = open_file(fi);
  std::unique_lock writing(inode.data_lock());
  // fi->flags is the descriptor's f_flags at the time of this write (the kernel's
  // fuse_write_flags), so O_APPEND follows fcntl(F_SETFL).
  auto n = file.write(static_cast<std::uint64_t>(offset), ConstByteSpan(reinterpret_cast<const std::uint8_t*>(buf), size),
                      (fi->flags & O_APPEND) != 0);
  writing.unlock();
  if (!n.is_ok()) return reply_error(req, n.error());
  if (file.defers_writes()) inode.note_deferred_write(realtime_ns());
  context.counters.count_file_write(*n, file.bypasses_cache());
  fuse_reply_write(req, *n);
}

void op_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::flush);
  if (is_control_ino(ino)) return static_cast<void>(fuse_reply_err(req, 0));
  // Close-to-open: the backing file holds what was written through the mount once a writer's
  // close(2) returns, and the errors of a deferred write-back (ENOSPC, EDQUOT, EIO) reach it.
  // A reader's close has nothing to report, and asks the backing nothing (on a network store a
  // flush is a round trip).
  if (!open_file(fi).opened_for_writing()) return static_cast<void>(fuse_reply_err(req, 0));
  auto written = write_back_by(inode_of(context, ino), open_file(fi), &OpenFile::write_back_at_close);
  note_attributes_changed(context, inode_of(context, ino));
  if (!written.is_ok()) return reply_error(req, written.error());
  auto result = open_file(fi).flush();
  if (!result.is_ok()) return reply_error(req, result.error());
  fuse_reply_err(req, 0);
}

void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::release);
  if (control_release(req, ino, fi)) return;
  inode_of(context, ino).remove_open_file(&open_file(fi));
  // The writer's last write-back happened while the metadata cache kept nothing of the file;
  // a lookup that asked the backing just before it must not be kept now that it could be.
  if (open_file(fi).opened_for_writing()) note_attributes_changed(context, inode_of(context, ino));
  context.files.take(fi->fh);
  fuse_reply_err(req, 0);
}

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  context_of(req).counters.count(Op::fsync);
  if (is_control_ino(ino)) return static_cast<void>(fuse_reply_err(req, 0));
  auto result = open_file(fi).fsync(datasync != 0);
  if (!result.is_ok()) return reply_error(req, result.error());
  fuse_reply_err(req, 0);
}

void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  context_of(req).counters.count(Op::fallocate);
  if (control_refuse(req, ino)) return;
  std::unique_lock changing(inode_of(context_of(req), ino).data_lock());
  auto result = open_file(fi).fallocate(mode, static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(length));
  if (!result.is_ok()) return reply_error(req, result.error());
  fuse_reply_err(req, 0);
}

void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in, fuse_ino_t ino_out,
                        off_t off_out, fuse_file_info* fi_out, size_t len, int flags) {
  MountContext& context = context_of(req);
  context.counters.count(Op::copy_file_range);
  if (control_refuse(req, ino_in) || control_refuse(req, ino_out)) return;
  if (flags != 0) return reply_error(req, EINVAL);
  // Copied through the two handles' FileData, not by the backing's copy_file_range: the bytes
  // must pass the cache (a cached source may hold write-back data the backing file does not
  // have yet, and the destination's cached pages must change with it).
  constexpr std::size_t kChunkBytes = 1 << 20;
  std::vector<std::uint8_t> chunk(std::min(len, kChunkBytes));
  std::size_t copied = 0;
  while (copied < len) {
    const std::size_t want = std::min(len - copied, chunk.size());
    std::shared_lock reading(inode_of(context, ino_in).data_lock());
    auto n = open_file(fi_in).read(static_cast<std::uint64_t>(off_in) + copied, ByteSpan(chunk.data(), want), nullptr);
    reading.unlock();
    if (!n.is_ok()) {
      if (copied != 0) break;
      return reply_error(req, n.error());
    }
    if (*n == 0) break;
    std::unique_lock writing(inode_of(context, ino_out).data_lock());
    // The kernel refuses copy_file_range into an O_APPEND descriptor (EBADF) before it gets here.
    auto written = open_file(fi_out).write(static_cast<std::uint64_t>(off_out) + copied, ConstByteSpan(chunk.data(), *n),
                                           false);
    if (!written.is_ok()) {
      if (copied != 0) break;
      return reply_error(req, written.error());
    }
    writing.unlock();
    copied += *written;
    if (*written < *n) break;
  }
  note_access(context, ino_in, open_file(fi_in));  // the source was read, as copy_file_range(2) reads it
  if (copied != 0 && open_file(fi_out).defers_writes()) inode_of(context, ino_out).note_deferred_write(realtime_ns());
  context.counters.count_file_read(copied, open_file(fi_in).bypasses_cache());
  context.counters.count_file_write(copied, open_file(fi_out).bypasses_cache());
  fuse_reply_write(req, copied);
}

void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi) {
  MountContext& context = context_of(req);
  context.counters.count(Op::lseek);
  if (control_refuse(req, ino)) return;
  // SEEK_DATA / SEEK_HOLE (the kernel answers the other whences itself) answer from the
  // backing file, once it holds every byte written through the mount.
  OpenFile& file = open_file(fi);
  auto written = write_back(inode_of(context, ino), file);
  note_attributes_changed(context, inode_of(context, ino));  // write-back data of earlier writers went back
  if (!written.is_ok()) return reply_error(req, written.error());
  auto fd = file.backing_fd();
  if (!fd.is_ok()) return reply_error(req, fd.error());
  const off_t result = ::lseek(*fd, off, whence);
  if (result < 0) return reply_error(req, errno);
  fuse_reply_lseek(req, result);
}

void op_flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op) {
  context_of(req).counters.count(Op::flock);
  if (control_refuse(req, ino)) return;
  auto fd = open_file(fi).backing_fd();
  if (!fd.is_ok()) return reply_error(req, fd.error());
  if (::flock(*fd, op) != 0) return reply_error(req, errno);
  fuse_reply_err(req, 0);
}

}  // namespace flashdir::fs
