// Regular-file data behind one small interface: the FUSE operations hand every read, write,
// truncate, fsync and namespace change of a regular file to a FileData, which either passes
// it straight to the backing file (PassthroughFileData) or runs it through the cache engine
// (an adapter over flashdir::cache::Engine). Nothing here includes libfuse.
//
// Thread safety: implementations are called from many FUSE worker threads at once, also on
// one OpenFile (the kernel may send concurrent reads and writes of one handle).
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flashdir/cache/engine.h"
#include "flashdir/file_io.h"
#include "flashdir/types.h"
#include "fs/caller_backing_fd.h"
#include "fs/stats_report.h"
#include "fs/sys_result.h"

namespace flashdir::fs {

// One open(2) of a regular file as the daemon serves it.
class OpenFile {
 public:
  virtual ~OpenFile() = default;
  // Bytes at `offset`; fewer than out.size() only at end of file. A cached file may leave the
  // admission of the pages it missed in `later` (if given), to run once the bytes are sent.
  virtual SysResult<std::size_t> read(std::uint64_t offset, ByteSpan out, cache::DeferredFill* later) = 0;
  // With `append` the bytes go to the end of the file whatever `offset` says. It is the
  // descriptor's O_APPEND as the write request carries it, not as it was opened: fcntl(F_SETFL)
  // turns it on and off on an open descriptor.
  virtual SysResult<std::size_t> write(std::uint64_t offset, ConstByteSpan in, bool append) = 0;
  virtual SysResult<bool> truncate(std::uint64_t size_bytes) = 0;
  virtual SysResult<bool> fallocate(int mode, std::uint64_t offset, std::uint64_t length) = 0;
  // close(2) of one of the caller's descriptors (after write_back()): closes a duplicate of the
  // backing descriptor, which reports what the backing file system defers to close (NFS)
  // without closing the descriptor later reads still need.
  virtual SysResult<bool> flush();
  virtual SysResult<bool> fsync(bool data_only) = 0;
  // True if writes stay in the data path, ahead of the backing file, until write_back().
  virtual bool defers_writes() const { return false; }
  // Makes the backing file hold every byte written through this file (write-back: its dirty
  // pages go back). Called before the daemon reads or changes the backing file itself in a way
  // those pages would contradict: SEEK_DATA/SEEK_HOLE, setting times, a second hard link.
  virtual SysResult<bool> write_back() { return true; }
  // close(2) of a writer: write_back(), or under a write-back delay (writeback_delay=) the data
  // made durable in the cache and the backing file given its size, its bytes to follow.
  virtual SysResult<bool> write_back_at_close() { return write_back(); }
  // Whether the caller opened it for writing: only such a close(2) writes back (a reader's
  // close must not report a writer's ENOSPC).
  virtual bool opened_for_writing() const { return true; }
  // Corrects attributes fstat'ed from the backing file with what the data path holds ahead of
  // it (write-back: the size).
  virtual void correct_attributes(struct stat&) {}
  // The open backing file (for lseek, flock, fchmod, futimens), opened now if the open left it
  // to its first use (caller_backing_fd.h).
  virtual SysResult<int> backing_fd() = 0;
  // True if the data goes straight to the backing file, through no cache.
  virtual bool bypasses_cache() const { return true; }
  // Taking a file off its cache, so that an inode keeps one data path (a cache serving one of
  // its opens while another writes the backing file around it would serve stale bytes). The
  // caller holds the inode's data lock alone and calls, for every open of the inode, each step
  // before the next: write_back_keeping_error() brings the backing file up to date without
  // taking an error a deferred write-back kept for the file's writer; prepare_pass_through()
  // gets what passing through needs and has the cache stop answering for the file (it may
  // fail; the cache then merely caches the file no more until its last release);
  // pass_through() switches and cannot fail. So a failure leaves every open on the path it had.
  virtual SysResult<bool> write_back_keeping_error() { return true; }
  virtual SysResult<bool> prepare_pass_through() { return true; }
  virtual void pass_through() {}

  // True at the first call only: a caller's first read of each open marks the backing file's
  // access time (operations_files.cc).
  bool first_read() { return !read_.exchange(true, std::memory_order_relaxed); }
  // The open found that a read would not move the access time: no first read marks it.
  void access_time_unmoved() { read_.store(true, std::memory_order_relaxed); }

 private:
  std::atomic<bool> read_{false};
};

struct OpenRequest {
  std::unique_ptr<CallerBackingFd> backing;  // the backing file, with the caller's flags
  struct statx attributes {}; // of the backing file, at the open (STATX_BASIC_STATS | STATX_BTIME)
  int flags = 0;              // the caller's open flags
  std::string relative_path;  // path below the backing root, as /proc names the descriptor
  bool bypass_cache = false;  // another open of the inode bypasses the cache: this one must too
};

class FileData {
 public:
  virtual ~FileData() = default;
  virtual SysResult<std::unique_ptr<OpenFile>> open(OpenRequest request) = 0;
  // True if a reader's backing file may be left unopened until first needed: the data path
  // reads through a descriptor of its own (caller_backing_fd.h).
  virtual bool opens_readers_on_use() const { return false; }
  // Truncation of a file nobody holds open through the mount (truncate(2) by path).
  // `path_fd` is an O_PATH descriptor of the file.
  virtual SysResult<bool> truncate_unopened(int path_fd, const std::string& relative_path,
                                            std::uint64_t size_bytes) = 0;
  // Puts into the backing file now what a delayed write-back (writeback_delay=) still holds of a
  // file nobody has open through the mount, before the daemon sets its times (the write-back
  // would move them). `path_fd` is an O_PATH descriptor of the file.
  virtual SysResult<bool> write_back_unopened(int /*path_fd*/, const std::string& /*relative_path*/) { return true; }
  // A backing file was renamed (with `exchange`, the two names swapped: RENAME_EXCHANGE) or lost
  // its last name through the mount.
  virtual void renamed(const std::string& old_relative_path, const std::string& new_relative_path, bool exchange) = 0;
  virtual void unlinked(const std::string& relative_path) = 0;
  // Flushes everything and marks the cache clean (unmount).
  virtual Status close() = 0;
  // The data path's part of the stats file (hits, misses, chip counters, ...).
  virtual std::vector<StatsSection> stats() const = 0;
  // The cache's chip loses power at its next program (mount option power_cut_control); ENOTSUP
  // for a data path without a cache, EIO for a cache already stopped.
  virtual SysResult<bool> cut_power() { return Errno{ENOTSUP}; }
};

}  // namespace flashdir::fs
