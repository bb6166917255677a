#include "flashdir/cache_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <thread>

namespace flashdir {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);

// The line a holder keeps in the lock file. An older daemon wrote its pid alone.
struct Holder {
  std::string pid;
  std::string program;
  std::string state;  // "serving /mnt/x" keeps the mount point in it
  bool reader = false;  // the line's writer is gone: the lock is held shared, by a read-only check
};

bool is_pid(const std::string& text) {
  return !text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string::npos;
}

bool alive(const std::string& pid) {
  return is_pid(pid) && (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno == EPERM);
}

Holder read_holder(int fd) {
  char text[4096];
  const ssize_t n = ::pread(fd, text, sizeof text, 0);
  std::string line(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  line = line.substr(0, line.find('\n'));  // a shorter line rewritten over a longer one ends here
  Holder holder;
  std::istringstream words(line);
  words >> holder.pid >> holder.program;
  std::getline(words >> std::ws, holder.state);
  // Readers write nothing: the line is the last writer's, who may be gone.
  if (!holder.pid.empty() && !alive(holder.pid)) return Holder{{}, {}, {}, true};
  return holder;
}

std::string describe(const Holder& holder) {
  if (holder.reader) return "a read-only check (fsck.flashdir -n)";
  const std::string who = holder.program.empty() || holder.program == kDaemonProgram ? "another flashdir daemon"
                                                                                      : holder.program;
  if (holder.pid.empty()) return who;
  return fmt::format("{} (pid {}{})", who, holder.pid, holder.state.empty() ? "" : ", " + holder.state);
}

// mountinfo escapes blanks and backslashes in a mount point as \ooo.
std::string unescape_mountinfo(const std::string& field) {
  const auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && octal(field[i + 1]) && octal(field[i + 2]) && octal(field[i + 3])) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// Whether process `pid` still has a mount at `mountpoint`, as it sees its mounts.
bool has_mount(const std::string& pid, const std::string& mountpoint) {
  if (!is_pid(pid)) return false;
  std::ifstream mounts("/proc/" + pid + "/mountinfo");
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (unescape_mountinfo(point) == mountpoint) return true;
  }
  return false;
}

// A daemon whose FUSE session has ended and that is closing the cache: it lets go of the lock
// within seconds.
bool closing(const Holder& holder) {
  if (holder.program != kDaemonProgram) return false;
  if (holder.state == kStateClosing) return true;
  const std::string serving = std::string(kStateServing) + " ";
  return holder.state.rfind(serving, 0) == 0 && !has_mount(holder.pid, holder.state.substr(serving.size()));
}

Status in_use(const TrustedDir& dir, const Holder& holder) {
  const bool daemon = !holder.reader && (holder.program.empty() || holder.program == kDaemonProgram);
  return Status::already_exists(fmt::format("cache {} is in use by {}; {}", dir.path.string(), describe(holder),
                                            daemon ? "unmount it first" : "try again once it is done"));
}

// Opens the lock file: created (0600) for a writer, never through a link.
Result<CacheLock> open_lock(const TrustedDir& dir, const LockRequest& request) {
  if (request.shared) {
    auto fd = open_in_dir(dir, kLockFileName, O_RDONLY);
    if (fd.is_ok()) return CacheLock(std::move(fd.value()), request.program, false);
    if (fd.status().sys_errno() == ENOENT) return CacheLock(UniqueFd(), request.program, false);
    return fd.status();
  }
  auto created = open_in_dir(dir, kLockFileName, O_RDWR | O_CREAT | O_EXCL);
  if (created.is_ok()) return CacheLock(std::move(created.value()), request.program, true);
  if (created.status().sys_errno() != EEXIST) return created.status();
  auto existing = open_in_dir(dir, kLockFileName, O_RDWR);
  if (!existing.is_ok()) return existing.status();
  return CacheLock(std::move(existing.value()), request.program, false);
}

}  // namespace

Status CacheLock::set_state(std::string_view state) {
  const std::string line = fmt::format("{} {} {}\n", ::getpid(), program_, state);
  // Written over the old line, then cut to length: a reader meanwhile sees one whole line.
  FLASHDIR_TRY(pwrite_all(fd_.get(), ConstByteSpan(reinterpret_cast<const std::uint8_t*>(line.data()), line.size()),
                          0, kLockFileName));
  if (::ftruncate(fd_.get(), static_cast<off_t>(line.size())) != 0)
    return errno_status(fmt::format("writing {}", kLockFileName));
  return Status::ok();
}

Result<CacheLock> lock_cache_dir(const TrustedDir& dir, const LockRequest& request) {
  auto lock = open_lock(dir, request);
  if (!lock.is_ok() || !lock->held()) return lock;
  const int fd = lock->fd_.get();
  const auto deadline = std::chrono::steady_clock::now() + request.wait_for_closing;
  const double seconds = std::chrono::duration<double>(request.wait_for_closing).count();
  bool waited = false;
  while (::flock(fd, (request.shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return errno_status(fmt::format("locking {}/{}", dir.path.string(), kLockFileName));
    const Holder holder = read_holder(fd);
    if (!closing(holder)) return in_use(dir, holder);
    if (std::chrono::steady_clock::now() >= deadline) {
      if (!waited) return in_use(dir, holder);
      return Status::already_exists(fmt::format("cache {} is still in use by {} after waiting {:g} s for it to close; "
                                                "try again later",
                                                dir.path.string(), describe(holder), seconds));
    }
    if (!waited && request.on_wait) {
      request.on_wait(
          fmt::format("waiting up to {:g} s for {} to finish closing cache {}", seconds, describe(holder), dir.path.string()));
    }
    waited = true;
    std::this_thread::sleep_for(kPollInterval);
  }
  if (!request.shared) FLASHDIR_TRY(lock->set_state(request.state));
  return lock;
}

}  // namespace flashdir
