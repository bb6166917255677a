// What the engine keeps per backing file while it is open through it, and per open handle.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "flashdir/cache/backing_store.h"

namespace flashdir::cache {

// Who a file is to the engine's maps of open and dirty files (doc/daemon.md "File identity"):
// its inode under the inode rule (path empty), its path under the path rule (inode 0).
struct FileKey {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::string path;

  bool operator==(const FileKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const FileKey& key) {
    return H::combine(std::move(h), key.device, key.inode, key.path);
  }
};

// Tells a sequential stream from random access: bytes read (or written) back to back so far.
class SequentialStream {
 public:
  // Records an access; returns the length of the stream it belongs to, this access included.
  std::uint64_t note(std::uint64_t offset, std::uint64_t length) {
    std::lock_guard lock(mutex_);
    run_bytes_ = offset == next_offset_ ? run_bytes_ + length : length;
    next_offset_ = offset + length;
    return run_bytes_;
  }

 private:
  std::mutex mutex_;
  std::uint64_t next_offset_ = UINT64_MAX;
  std::uint64_t run_bytes_ = 0;
};

// A mutex that says whether a thread is waiting for it: the flusher's batches give way to the
// fsync, close or truncate waiting for the file's backing, between two of their writes
// (EngineOptions::write_back_piece_bytes), and its stream takes no next batch (std::mutex is
// not fair: a flusher that locks again at once can starve them).
class GivingWayMutex {
 public:
  void lock() {
    waiting_.fetch_add(1, std::memory_order_relaxed);
    mutex_.lock();
    waiting_.fetch_sub(1, std::memory_order_relaxed);
  }
  void unlock() { mutex_.unlock(); }
  bool waited_for() const { return waiting_.load(std::memory_order_relaxed) > 0; }

 private:
  std::mutex mutex_;
  std::atomic<int> waiting_{0};
};

// write-through: the new contents of the pages a write touched, for the cache, in page order
// from first_page; `keep` says which of them to store (a page the write covers in part and the
// cache lacks is left out).
struct WrittenPages {
  // Readers, which hold the file lock shared, store them one at a time.
  std::mutex mutex;
  bool pending = false;
  std::uint64_t first_page = 0;
  std::vector<std::uint8_t> bytes;
  std::vector<bool> keep;
  bool admit = false;  // whether pages not cached take slots (the sequential cutoff)
};

struct FileState {
  std::uint64_t file_id = 0;
  // Guarded by the engine's namespace lock: the key it is found by, and the path it was last
  // reached at (relative to the backing root; under the inode rule a hint, kept for the catalog).
  FileKey key;
  std::string path;
  // The engine's lock order, level 1: shared for reads, exclusive for everything that changes
  // the file's bytes or size.
  std::shared_mutex lock;
  // The file's size as the engine made it; in write-back, beyond the backing file's until the
  // dirty pages past its end go back (or an fsync extends it).
  std::atomic<std::uint64_t> size_bytes{0};
  // Serializes the engine's own changes to the backing file that happen outside `lock` (the
  // write-back flusher) with truncate, fallocate, fsync and the last release. Lock order: after
  // `lock`, before the cache lock.
  GivingWayMutex backing_mutex;
  // The backing file's attributes as the engine last left them (at open, after each of its own
  // writes, write-backs and truncates); guarded by backing_mutex. At the last release a file
  // that differs was changed behind the engine's back.
  BackingAttributes expected;
  // Write-through and write-around writes since `expected` was taken, which skip the stat
  // after each write (a round trip on a network store): the size they left is `size_bytes`,
  // their times unknown until the next stat, which takes them as the engine's own if the rest
  // is as the engine left it. Guarded by backing_mutex.
  bool own_writes_unseen = false;
  // Write-back: a write or append of the engine's stat'ed the backing file before it, and only
  // the engine's writes into the cache came after: the later ones check nothing, as
  // own_writes_unseen spares write-through's (the backing file is as `expected` says unless
  // changed behind the engine). Guarded by backing_mutex; cleared by every other stat and at
  // the last release.
  bool cached_writes_checked = false;
  // The caller writes to the backing file around the engine through some of this file's opens
  // (Engine::bypass): its times then prove nothing, and the file counts as changed behind the
  // engine, and takes no page into the cache, until its last release.
  std::atomic<bool> bypassed{false};
  // Whether the engine changed the backing file, or stat'ed it, since the open that validated it
  // against the catalog: until then the catalog's record is `expected`, and a last release that
  // finds the file as expected records nothing. Guarded by backing_mutex.
  bool touched_since_open = false;
  // Whether `now` (the backing file stat'ed) shows a change made behind the engine since its
  // own last change. Its own writes not seen yet by a stat may have moved the times (to any
  // value) and leave the size the engine made. Backing_mutex held.
  bool changed_behind(const BackingAttributes& now) const {
    if (bypassed) return true;
    if (!own_writes_unseen) return !now.same_file_and_contents(expected);
    BackingAttributes own = expected;
    own.size_bytes = size_bytes.load();
    own.mtime_ns = now.mtime_ns;
    own.ctime_ns = now.ctime_ns;
    return !now.same_file_and_contents(own);
  }
  // write-back: the handle of the first write since the file was last clean (any writer's
  // descriptor writes the file), through which its dirty pages go back (kept open until they
  // have); guarded by backing_mutex, changed only by set_write_target.
  std::shared_ptr<BackingFile> write_target;
  // write_target's file, read without backing_mutex: a write that finds a target set takes no
  // backing_mutex, which the flusher holds while a batch goes back.
  std::atomic<const BackingFile*> write_target_file{nullptr};
  void set_write_target(std::shared_ptr<BackingFile> target) {
    write_target = std::move(target);
    write_target_file.store(write_target.get(), std::memory_order_release);
  }
  // write-back with a delay (EngineOptions::write_back_delay_ms): when the flusher writes the
  // file back, set by the first close that left dirty pages and cleared once they are back (a
  // later close does not move it, so the delay bounds how stale the backing file is); guarded by
  // the engine's cache lock.
  std::optional<std::chrono::steady_clock::time_point> write_back_due;
  // write-back: why dirty pages of the file had to be dropped unwritten (by the flusher, a
  // truncate), until an fsync or close reports it; guarded by backing_mutex.
  Status write_back_error;
  // Whether the catalog marks the file as holding fsync'd data not yet back (Catalog::
  // mark_unwritten); guarded by backing_mutex.
  bool marked_unwritten = false;
  // A dirty page found damaged by a read (its only copy lost), until an fsync or close reports
  // it with write_back_error; guarded by the engine's cache lock.
  Status lost_while_open;
  int open_handles = 0;      // guarded by the namespace lock
  // Guarded by the namespace lock: its key reaches another file now (path rule: a rename over
  // its path, an unlink, or another file met there); its pages go and its record is forgotten
  // at the last release.
  bool detached = false;
  // Guarded by the namespace lock: a name of it was removed through the engine while it was open
  // or waited for the flusher (an unlink, or a rename over it); its last release asks the backing
  // whether any is left.
  bool name_removed = false;
  SequentialStream read_stream;
  SequentialStream write_stream;
  // write-through: a large write's pages go into the cache behind it, while the next write's
  // bytes travel to the backing file (EngineCore::write_through). Until then the cache may hold
  // the range's previous bytes: whoever takes `lock` next stores them before anything else
  // (EngineCore::store_written_behind). Guarded by `lock`, and by its own mutex when shared.
  WrittenPages written_behind;
};

struct OpenHandle {
  std::shared_ptr<FileState> file;
  std::shared_ptr<BackingFile> backing;
  // This open's reads, as the kernel keeps read-ahead state per open file: only an open that
  // reads on from where it stopped gets read-ahead.
  SequentialStream reads;
  // Where the pages end that this open's last read left to admit after its reply (0: it left
  // none): a sequential reader's next request reads the backing from there before it looks in
  // the cache.
  std::atomic<std::uint64_t> deferred_fill_end{0};
  // This open's writes: in write-back a stream of them goes back behind its writer, also while
  // other opens write the file elsewhere (interleaved, they made no stream of the file's).
  SequentialStream writes;
};

}  // namespace flashdir::cache
