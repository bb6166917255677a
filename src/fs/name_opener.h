// Opens in the background the inodes known by name only (InodeTable::remember_named) beside one
// that a program opens.
//
// After a restart the metadata cache answers the names of the tree without the backing, and each
// inode is opened at its first use, one after the other in a program that reads files one at a
// time (tar, cp -r, rsync). By name that is an openat and a stat: on a network store, a round
// trip or more per file than the same files cost before the restart, when the inodes had their
// descriptors. A program that opens one file of a directory is likely to open its siblings next,
// so they are opened meanwhile, several at a time, as read-ahead reads a file's next pages.
// Only those without a handle, but under readmostly: by its handle an object's first use costs
// one stat, which is also its open's own stat (close-to-open), so opening it ahead would add the
// open's stat and hide nothing; under readmostly the open stands on the stat the check made
// ahead (kept_open_answer), and the check is what opening ahead hides. Listing or stat'ing a
// tree (find, git status) opens no file, and starts nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "fs/inode_table.h"

namespace flashdir::fs {

class NameOpener {
 public:
  // How many siblings one open queues at most (a large directory's next ones come with a later
  // open of one not opened yet), and how many are opened at a time.
  static constexpr std::size_t kBatch = 256;
  static constexpr unsigned kThreads = 8;

  // `open` opens an inode known by name only as its first use would (InodeTable::path_fd), and
  // says whether it could.
  NameOpener(InodeTable& inodes, std::function<bool(Inode&)> open) : inodes_(inodes), open_(std::move(open)) {}
  ~NameOpener();  // stops the threads; what is still queued is given back unopened

  // Queues the inodes known by name only in the directory `inode` is known by name in (each
  // once), if it is so known. Called before `inode` is opened: afterwards it has no name here.
  void open_siblings_soon(Inode& inode);

  struct Counts {
    std::uint64_t queued = 0;
    std::uint64_t opened = 0;
    std::uint64_t failed = 0;  // the name is another object now, or none (ESTALE at its use)
  };
  Counts counts() const;

 private:
  void work();

  InodeTable& inodes_;
  const std::function<bool(Inode&)> open_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Inode*> queue_;          // guarded; each holds a lookup, given back once opened
  bool stopping_ = false;             // guarded
  std::vector<std::thread> threads_;  // guarded; started at the first queueing
  std::atomic<std::uint64_t> queued_{0};
  std::atomic<std::uint64_t> opened_{0};
  std::atomic<std::uint64_t> failed_{0};
};

}  // namespace flashdir::fs
