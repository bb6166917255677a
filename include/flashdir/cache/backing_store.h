// The backing store seam: how the engine reaches the slow directory it caches. The daemon plugs
// in the POSIX implementation (rooted at a directory fd; every path is resolved below it with
// openat and O_NOFOLLOW semantics, so a symlink in the backing tree can never lead the cache
// outside it); tests plug in doubles that inject failures and latency.
//
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

#include "flashdir/catalog.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir::cache {

class BackingFile {
 public:
  virtual ~BackingFile() = default;
  // Reads up to out.size() bytes at `offset`; fewer only at end of file. Returns the count.
  virtual Result<std::size_t> read(std::uint64_t offset, ByteSpan out) = 0;
  // Writes all of `data` at `offset`.
  virtual Status write(std::uint64_t offset, ConstByteSpan data) = 0;
  virtual Status truncate(std::uint64_t size_bytes) = 0;
  // fallocate(2) with its mode bits (allocate, punch a hole, zero, collapse or insert a range).
  virtual Status allocate(int mode, std::uint64_t offset, std::uint64_t length) = 0;
  virtual Status sync() = 0;
  // The file's attributes, `device` its raw st_dev (the engine makes it relative to the root's).
  virtual Result<BackingAttributes> stat() = 0;
};

// The backing root as the cache sees it.
struct BackingRoot {
  BackingRootRecord record;  // what the catalog keeps and checks at every open
  std::uint64_t device = 0;  // its st_dev now: files on it are recorded with device 0
  // False where the file system numbers inodes as it meets them (FUSE: sshfs, object-store
  // mounts), so that a number says nothing across lookups: files are then known by path.
  bool stable_inode_numbers = true;
};

class BackingStore {
 public:
  virtual ~BackingStore() = default;
  // Opens an existing regular file for reading and writing (read-only if it cannot be written:
  // writes then fail), without changing its access time where the daemon may (O_NOATIME). not_found if it does not exist; invalid_argument if it is not a regular
  // file or a component is a symlink.
  virtual Result<std::unique_ptr<BackingFile>> open(std::string_view relative_path) = 0;
  virtual Status rename(std::string_view from, std::string_view to) = 0;
  virtual Status unlink(std::string_view relative_path) = 0;
  virtual Result<BackingRoot> root() = 0;
};

// The real one, rooted at `root` (opened O_DIRECTORY|O_PATH once).
Result<std::unique_ptr<BackingStore>> open_posix_backing_store(const std::filesystem::path& root);

// How a POSIX backing file reads. A network or FUSE store's kernel client sends a buffered read
// as requests of 128 KiB, one after another, a round trip each, and keeps a copy of what it
// read in its page cache. A read longer than `direct_above_bytes` (0: none) goes through a
// second descriptor of the file, opened with O_DIRECT at the first such read: the client sends
// it as requests of its largest size at once and keeps no copy. Where the store refuses
// O_DIRECT (EINVAL, at the open or at a read), every file sharing `direct_refused` reads as
// before from then on: a read longer than `parallel_piece_bytes` (0: none) goes out in pieces
// of that size at once, each from a thread of its own, so that the round trips overlap; a file
// whose direct descriptor cannot be opened otherwise (a permission) reads so on its own. Local
// file systems gain nothing from either.
struct BackingReads {
  std::size_t direct_above_bytes = 0;
  std::size_t parallel_piece_bytes = 0;
  std::shared_ptr<std::atomic<bool>> direct_refused = std::make_shared<std::atomic<bool>>(false);
};

// Wraps a descriptor the caller already opened on a backing file (the daemon's); the file takes
// ownership of `fd`.
std::unique_ptr<BackingFile> adopt_posix_backing_file(int fd, std::string_view relative_path, BackingReads reads = {});
// A backing file the engine opens only once it first reads, writes, truncates, allocates or
// syncs it, so that an open whose reads the cache serves costs no backing open (a round trip on
// a network store). `open(reference)` makes its descriptor then, once (an open(2)-like call: a
// descriptor, or -1 with errno set). Until then stat() asks `reference`, a descriptor of the
// same file, which the file takes ownership of and closes once opened.
std::unique_ptr<BackingFile> adopt_posix_backing_file_opened_on_use(int reference, std::string_view relative_path,
                                                                    std::function<int(int reference)> open,
                                                                    BackingReads reads = {});
// A backing file's attributes from statx(2) with STATX_BASIC_STATS | STATX_BTIME, `device` its
// raw st_dev (as BackingFile::stat gives them), for a caller that stat'ed it already.
BackingAttributes attributes_of_statx(const struct statx& st);

}  // namespace flashdir::cache
