// The cache behind a mount, kept running or stopped. The cache's own storage can fail under a
// running mount: its disk fills (the catalog, RocksDB, needs room for every write), or it returns
// errors. Then the cache stops and the mount serves every file from the backing directory;
// write-through and write-around lose nothing, since the backing holds every acknowledged byte;
// a write-back file whose data only the cache holds answers EIO until the cache runs again. The
// supervisor stops the cache itself before the disk is full (less than min_free left), so that
// RocksDB never meets ENOSPC, and reopens it (a restart, as after a power cut) once there is room
// again and nothing holds the stopped one. Each stop and resume is logged once and counted in
// the stats (section "cache_health").
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flashdir/cache/engine.h"
#include "fs/stats_report.h"

namespace flashdir::fs {

class CacheSupervisor {
 public:
  using Reopen = std::function<Result<std::unique_ptr<cache::MountedCache>>()>;
  struct Options {
    std::filesystem::path dir;         // the cache directory, whose file system is watched
    std::uint64_t min_free_bytes = 0;  // stop below this much free space; resume at twice it
    Reopen reopen;                     // opens the cache again (the daemon's own open)
    std::chrono::milliseconds check_interval{1000};
    std::chrono::milliseconds retry_interval{10000};  // between failed reopens
  };

  CacheSupervisor(std::unique_ptr<cache::MountedCache> cache, Options options);
  ~CacheSupervisor();

  // The cache new opens go through; null while the cache is stopped.
  std::shared_ptr<cache::MountedCache> running();
  // Calls `look` with the cache, running or stopped (for its stats); not at all after a failed
  // reopen left none. The cache cannot be reopened meanwhile.
  void inspect(const std::function<void(cache::MountedCache&)>& look) const;
  // True once the cache has stopped, until it resumes (cheap: for every request).
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }
  // After a call into `cache` failed: true if the cache has stopped (its engine stopped, or the
  // supervisor stopped it), the stop recorded once.
  bool stopped_after_failure(cache::MountedCache& cache);
  // Whether the stopped cache holds write-back data of the file (`relative_path`, or the inode
  // `st` names, as the cache tells files apart) that its backing file lacks: nothing may read or
  // write the file around it.
  bool holds_unwritten(const std::string& relative_path, const struct stat& st) const;
  // A rename or an unlink made through the mount while the cache is stopped: where the cache
  // tells files apart by path, the files it holds data of keep their own names.
  void renamed_while_stopped(const std::string& from, const std::string& to, bool exchange);
  void unlinked_while_stopped(const std::string& relative_path);

  // Unmount: closes a running cache (clean); a stopped one is left for the next mount to recover.
  Status close();
  StatsSection stats() const;

 private:
  void watch();
  void check();                       // one round of watch(), mutex_ held by the caller
  void stop(const Status& reason);    // mutex_ held
  void resume(std::unique_lock<std::mutex>& lock);

  const Options options_;
  mutable std::mutex mutex_;
  std::shared_ptr<cache::MountedCache> cache_;      // guarded by mutex_; null after a failed reopen
  std::atomic<bool> stopped_{false};                // written under mutex_
  std::string reason_;                              // guarded by mutex_: why it stopped last
  std::vector<cache::UnwrittenFile> unwritten_;     // guarded by mutex_: while stopped
  IdentityRule unwritten_rule_ = IdentityRule::inode;  // guarded by mutex_: how unwritten_ is matched
  std::uint64_t stops_ = 0;                         // guarded by mutex_
  std::uint64_t resumes_ = 0;                       // guarded by mutex_
  std::uint64_t failed_reopens_ = 0;                // guarded by mutex_
  std::chrono::steady_clock::time_point next_reopen_;  // guarded by mutex_
  bool closing_ = false;                            // guarded by mutex_
  std::condition_variable wake_;
  std::thread watcher_;
};

}  // namespace flashdir::fs
