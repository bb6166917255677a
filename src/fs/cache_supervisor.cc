#include "fs/cache_supervisor.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "flashdir/size.h"

namespace flashdir::fs {
namespace {

// Free bytes on the file system holding `dir`, as an unprivileged writer may use them; nullopt
// if statvfs fails (the check is skipped, not taken for a full disk).
std::optional<std::uint64_t> free_bytes(const std::filesystem::path& dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

}  // namespace

CacheSupervisor::CacheSupervisor(std::unique_ptr<cache::MountedCache> cache, Options options)
    : options_(std::move(options)), cache_(std::move(cache)) {
  std::lock_guard lock(mutex_);
  check();  // a mount on a disk already short of room serves from the backing from the start
  watcher_ = std::thread([this] { watch(); });
}

CacheSupervisor::~CacheSupervisor() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

std::shared_ptr<cache::MountedCache> CacheSupervisor::running() {
  std::lock_guard lock(mutex_);
  return stopped() ? nullptr : cache_;
}

void CacheSupervisor::inspect(const std::function<void(cache::MountedCache&)>& look) const {
  std::lock_guard lock(mutex_);
  if (cache_ != nullptr) look(*cache_);
}

bool CacheSupervisor::stopped_after_failure(cache::MountedCache& cache) {
  std::lock_guard lock(mutex_);
  if (stopped()) return true;
  const std::optional<Status> reason = cache.engine().stopped();
  if (!reason) return false;
  stop(*reason);
  return true;
}

bool CacheSupervisor::holds_unwritten(const std::string& relative_path, const struct stat& st) const {
  std::lock_guard lock(mutex_);
  for (const cache::UnwrittenFile& file : unwritten_) {
    if (unwritten_rule_ == IdentityRule::path ? file.relative_path == relative_path
                                               : file.inode == st.st_ino && file.device == st.st_dev)
      return true;
  }
  return false;
}

namespace {

// `path` with its leading `from` (the path itself, or a directory above it) replaced by `to`;
// nullopt if `from` is neither.
std::optional<std::string> moved(const std::string& path, const std::string& from, const std::string& to) {
  if (path == from) return to;
  if (path.size() > from.size() && path.starts_with(from) && path[from.size()] == '/') return to + path.substr(from.size());
  return std::nullopt;
}

}  // namespace

void CacheSupervisor::renamed_while_stopped(const std::string& from, const std::string& to, bool exchange) {
  std::lock_guard lock(mutex_);
  if (unwritten_rule_ != IdentityRule::path) return;  // inodes do not change with names
  for (cache::UnwrittenFile& file : unwritten_) {
    if (auto there = moved(file.relative_path, from, to)) {
      file.relative_path = *there;
    } else if (auto back = exchange ? moved(file.relative_path, to, from) : std::nullopt) {
      file.relative_path = *back;
    } else if (moved(file.relative_path, to, to)) {
      file.relative_path.clear();  // replaced: the name now reaches another file
    }
  }
}

void CacheSupervisor::unlinked_while_stopped(const std::string& relative_path) {
  std::lock_guard lock(mutex_);
  if (unwritten_rule_ != IdentityRule::path) return;
  for (cache::UnwrittenFile& file : unwritten_)
    if (file.relative_path == relative_path) file.relative_path.clear();  // a file made there later is another
}

void CacheSupervisor::watch() {
  std::unique_lock lock(mutex_);
  while (!closing_) {
    wake_.wait_for(lock, options_.check_interval, [this] { return closing_; });
    if (closing_) break;
    check();
    if (stopped() && !closing_) resume(lock);
  }
}

void CacheSupervisor::check() {
  if (stopped() || cache_ == nullptr) return;
  const std::optional<std::uint64_t> free = free_bytes(options_.dir);
  if (free && *free < options_.min_free_bytes) {
    stop(Status::no_space(fmt::format("the cache directory's file system has {} free, less than min_free={}",
                                      format_size(*free), format_size(options_.min_free_bytes))));
  } else if (std::optional<Status> reason = cache_->engine().stopped()) {
    stop(*reason);
  }
}

void CacheSupervisor::stop(const Status& reason) {
  if (stopped()) return;
  reason_ = reason.to_string();
  ++stops_;
  if (cache_ != nullptr) {
    if (Status kept = cache_->engine().stop(reason); !kept.is_ok())
      spdlog::error("the stopping cache could not keep its write-back data durably: {}", kept.to_string());
    unwritten_ = cache_->engine().files_with_unwritten_data();
    unwritten_rule_ = cache_->engine().identity_rule();
  }
  stopped_.store(true, std::memory_order_release);
  spdlog::error("the cache stopped: {}; the mount serves every file from the backing directory until the cache "
                "can run again{}",
                reason_,
                unwritten_.empty() ? std::string()
                                   : fmt::format(" ({} files whose write-back data the cache holds answer EIO)",
                                                 unwritten_.size()));
}

// Reopens the stopped cache once its disk has room (twice min_free, so that a disk at the edge
// does not flap) and no open file still holds the stopped engine. The reopen is the restart
// after a power cut: write-back data goes back to its files, and pages the backing changed
// meanwhile are dropped.
void CacheSupervisor::resume(std::unique_lock<std::mutex>& lock) {
  if (std::chrono::steady_clock::now() < next_reopen_) return;
  const std::optional<std::uint64_t> free = free_bytes(options_.dir);
  if (!free || *free < 2 * options_.min_free_bytes) return;
  if (cache_ != nullptr && cache_.use_count() > 1) return;  // running() hands out no copy while stopped
  std::shared_ptr<cache::MountedCache> old = std::move(cache_);
  lock.unlock();
  old.reset();  // before the reopen: the catalog and the image take one user at a time
  auto reopened = options_.reopen();
  lock.lock();
  if (!reopened.is_ok()) {
    ++failed_reopens_;
    next_reopen_ = std::chrono::steady_clock::now() + options_.retry_interval;
    spdlog::error("the cache could not be reopened (next try in {} s): {}",
                  std::chrono::duration_cast<std::chrono::seconds>(options_.retry_interval).count(),
                  reopened.status().to_string());
    return;
  }
  cache_ = std::move(reopened.value());
  unwritten_.clear();
  ++resumes_;
  stopped_.store(false, std::memory_order_release);
  spdlog::warn("the cache runs again (it had stopped: {})", reason_);
}

Status CacheSupervisor::close() {
  std::unique_lock lock(mutex_);
  closing_ = true;
  lock.unlock();
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  lock.lock();
  if (stopped()) {
    cache_.reset();
    return Status::io_error(fmt::format(
        "the cache had stopped ({}): it was not closed cleanly, and the next mount recovers it", reason_));
  }
  return cache_->close();
}

StatsSection CacheSupervisor::stats() const {
  std::lock_guard lock(mutex_);
  StatsSection section{"cache_health", {}};
  section.rows.emplace_back("state", std::string(stopped() ? "stopped" : "caching"));
  section.rows.emplace_back("reason", reason_);
  section.rows.emplace_back("stops", stops_);
  section.rows.emplace_back("resumes", resumes_);
  section.rows.emplace_back("failed_reopens", failed_reopens_);
  section.rows.emplace_back("files_held_unwritten", static_cast<std::uint64_t>(unwritten_.size()));
  if (const std::optional<std::uint64_t> free = free_bytes(options_.dir)) section.rows.emplace_back("free_bytes", *free);
  section.rows.emplace_back("min_free_bytes", options_.min_free_bytes);
  return section;
}

}  // namespace flashdir::fs
