// One process at a time changes a cache directory: the daemon while it serves, mkfs.flashdir
// while it formats, fsck.flashdir -y while it repairs; fsck.flashdir -n shares the lock with
// other readers. The lock is flock() on DIR/daemon.lock, so it dies with its holder and a
// kill -9 leaves nothing to clean up. The holder keeps one line in the file for whoever finds
// the cache locked: "PID PROGRAM STATE", where a daemon's state is "starting",
// "serving MOUNTPOINT" or "closing" (doc/daemon.md).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "flashdir/file_io.h"
#include "flashdir/status.h"
#include "flashdir/trusted_dir.h"

namespace flashdir {

inline constexpr const char* kLockFileName = "daemon.lock";
// The daemon's name in the lock line; the only holder anyone waits for.
inline constexpr const char* kDaemonProgram = "flashdir";
inline constexpr const char* kStateServing = "serving";  // followed by the mount point
inline constexpr const char* kStateClosing = "closing";

struct LockRequest {
  bool shared = false;  // a read-only check: beside other readers, never beside a holder that writes
  std::string program;  // "flashdir", "mkfs.flashdir", "fsck.flashdir"
  std::string state;    // what it does first ("starting", "formatting", "repairing")
  // How long to wait for a daemon that is closing the cache: its lock line says "closing", or
  // "serving" a mount point that its process no longer has (the unmount came, the daemon has
  // not noticed yet). A daemon still mounted, and every other holder, is refused at once.
  std::chrono::milliseconds wait_for_closing{0};
  std::function<void(const std::string&)> on_wait;  // told once, when a wait begins
};

class CacheLock {
 public:
  CacheLock(UniqueFd fd, std::string program, bool created)
      : fd_(std::move(fd)), program_(std::move(program)), created_(created) {}

  // False for a shared lock on a directory that has no lock file (no writer has ever used it).
  bool held() const { return fd_.valid(); }
  // The lock file did not exist before this lock.
  bool created_file() const { return created_; }
  // Replaces the holder's line with "PID PROGRAM state" (an exclusive lock only).
  Status set_state(std::string_view state);

 private:
  friend Result<CacheLock> lock_cache_dir(const TrustedDir& dir, const LockRequest& request);

  UniqueFd fd_;
  std::string program_;
  bool created_ = false;
};

// Takes DIR/daemon.lock (created 0600 if missing, never through a link) exclusively, or shared,
// without blocking, and writes the holder's line. Refused, in one line naming the holder and its
// state, while another process holds it.
Result<CacheLock> lock_cache_dir(const TrustedDir& dir, const LockRequest& request);

}  // namespace flashdir
