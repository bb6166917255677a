#include "fs/engine_file_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fs/backing_stat.h"
#include "fs/descriptor_path.h"
#include "fs/ftl_stats_section.h"
#include "fs/passthrough_file_data.h"

namespace flashdir::fs {
namespace {

Errno errno_for(const Status& status) { return Errno{errno_of(status)}; }

class EngineOpenFile final : public OpenFile {
 public:
  EngineOpenFile(std::shared_ptr<cache::MountedCache> cache, CacheSupervisor& supervisor, cache::FileHandle handle,
                 std::unique_ptr<CallerBackingFd> fd, int flags, bool write_back)
      : cache_(std::move(cache)),
        supervisor_(supervisor),
        handle_(handle),
        fd_(std::move(fd)),
        for_writing_((flags & O_ACCMODE) != O_RDONLY),
        write_back_(write_back),
        sync_writes_(write_back && (flags & O_DSYNC) != 0) {}

  ~EngineOpenFile() override {
    if (engine().stopped()) return;  // a stopped engine is left as it is, for its restart
    if (Status s = engine().release(handle_); !s.is_ok()) spdlog::error("releasing a cached file: {}", s.to_string());
  }

  SysResult<std::size_t> read(std::uint64_t offset, ByteSpan out, cache::DeferredFill* later) override {
    if (PassthroughFile* direct = direct_path()) return direct->read(offset, out);
    auto n = engine().read(handle_, offset, out, later);
    if (n.is_ok()) return *n;
    if (PassthroughFile* direct = leave_stopped_cache()) return direct->read(offset, out);
    return errno_for(n.status());
  }

  SysResult<std::size_t> write(std::uint64_t offset, ConstByteSpan in, bool append) override {
    if (PassthroughFile* direct = direct_path()) return direct->write(offset, in, append);
    // Appends go to the end of the file as the engine has it (with write-back, past the backing
    // file's end), found and written under the engine's file lock.
    auto n = append ? engine().append(handle_, in) : engine().write(handle_, offset, in);
    if (!n.is_ok()) {
      // A write at an offset may be made again on the backing file; an append the failed call
      // may already have made there may not.
      PassthroughFile* direct = leave_stopped_cache();
      if (direct != nullptr && !append) return direct->write(offset, in, append);
      return errno_for(n.status());
    }
    // O_SYNC and O_DSYNC: a write returns durable. With write-back that is in the cache, as
    // after fsync; otherwise the engine's descriptor carries the flag to the backing file.
    if (sync_writes_) {
      if (Status s = engine().fsync(handle_); !s.is_ok()) return errno_for(s);
    }
    return *n;
  }

  SysResult<bool> truncate(std::uint64_t size_bytes) override {
    if (PassthroughFile* direct = direct_path()) return direct->truncate(size_bytes);
    if (Status s = engine().truncate(handle_, size_bytes); !s.is_ok()) {
      if (PassthroughFile* direct = leave_stopped_cache()) return direct->truncate(size_bytes);
      return errno_for(s);
    }
    return true;
  }

  SysResult<bool> fallocate(int mode, std::uint64_t offset, std::uint64_t length) override {
    if (PassthroughFile* direct = direct_path()) return direct->fallocate(mode, offset, length);
    if (Status s = engine().fallocate(handle_, mode, offset, length); !s.is_ok()) {
      if (PassthroughFile* direct = leave_stopped_cache()) return direct->fallocate(mode, offset, length);
      return errno_for(s);
    }
    return true;
  }

  SysResult<bool> fsync(bool data_only) override {
    if (PassthroughFile* direct = direct_path()) return direct->fsync(data_only);
    if (Status s = engine().fsync(handle_); !s.is_ok()) {
      if (PassthroughFile* direct = leave_stopped_cache()) return direct->fsync(data_only);
      return errno_for(s);
    }
    return true;
  }

  SysResult<int> backing_fd() override { return fd_->get(); }

  bool bypasses_cache() const override { return direct() != nullptr; }
  SysResult<bool> write_back_keeping_error() override { return engine_write_back(&cache::Engine::write_back_keeping_error); }
  SysResult<bool> prepare_pass_through() override {
    std::lock_guard lock(switch_mutex_);
    // The engine stops answering for the file before any write goes around it (a stopped
    // engine answers for nothing).
    if (Status s = engine().bypass(handle_); !s.is_ok() && !engine().stopped()) return errno_for(s);
    return prepare_locked();
  }
  void pass_through() override { direct_.store(direct_owner_.get(), std::memory_order_release); }

  bool defers_writes() const override { return write_back_ && !bypasses_cache(); }
  bool opened_for_writing() const override { return for_writing_; }

  SysResult<bool> write_back() override { return engine_write_back(&cache::Engine::write_back); }
  SysResult<bool> write_back_at_close() override { return engine_write_back(&cache::Engine::write_back_at_close); }

  void correct_attributes(struct stat& st) override {
    if (!defers_writes()) return;
    if (auto size = engine().size(handle_); size.is_ok()) st.st_size = static_cast<off_t>(*size);
  }

 private:
  cache::Engine& engine() const { return cache_->engine(); }
  // One of the engine's write-backs of this file, if its writes are deferred; after the engine
  // stopped the backing file holds all of it (leave_stopped_cache).
  SysResult<bool> engine_write_back(Status (cache::Engine::*call)(cache::FileHandle)) {
    if (!defers_writes()) return true;
    if (Status s = (engine().*call)(handle_); !s.is_ok()) {
      if (leave_stopped_cache() != nullptr) return true;
      return errno_for(s);
    }
    return true;
  }
  // The file the data goes to once it bypasses the engine; null until pass_through().
  PassthroughFile* direct() const { return direct_.load(std::memory_order_acquire); }

  // The backing file when the data bypasses the engine: a second name, or a stopped cache.
  PassthroughFile* direct_path() {
    if (PassthroughFile* direct = this->direct()) return direct;
    return supervisor_.stopped() ? leave_stopped_cache() : nullptr;
  }

  // After an engine call failed, or once the cache stopped: the backing file, which the data
  // goes to from now on, if the cache has stopped and the backing file holds all of this file's
  // data; null otherwise (the call's error stands: the engine's own, or the stopped cache's for
  // a file whose write-back data only the cache holds).
  PassthroughFile* leave_stopped_cache() {
    if (!supervisor_.stopped_after_failure(*cache_)) return nullptr;
    if (engine().holds_unwritten_data(handle_)) return nullptr;
    std::lock_guard lock(switch_mutex_);
    if (direct() == nullptr) {
      if (!prepare_locked().is_ok()) return nullptr;
      pass_through();
    }
    return direct();
  }

  SysResult<bool> prepare_locked() {
    if (direct_owner_ != nullptr) return true;
    auto fd = fd_->get();
    if (!fd.is_ok()) return Errno{fd.error()};
    UniqueFd duplicate(::fcntl(*fd, F_DUPFD_CLOEXEC, 0));
    if (!duplicate.valid()) return last_errno();
    direct_owner_ = std::make_unique<PassthroughFile>(std::move(duplicate));
    return true;
  }

  // Keeps the cache (running or stopped) alive for the handle: a stopped cache is reopened only
  // once no open file holds it.
  const std::shared_ptr<cache::MountedCache> cache_;
  CacheSupervisor& supervisor_;
  cache::FileHandle handle_;
  const std::unique_ptr<CallerBackingFd> fd_;  // the caller's backing descriptor (flock, times, mode)
  const bool for_writing_;
  const bool write_back_;
  const bool sync_writes_;

  // Made by prepare_pass_through(), set by pass_through(): the data then bypasses the engine
  // (whose handle stays open until the release, which drops the pages the direct writes made
  // stale).
  std::mutex switch_mutex_;  // the stopped cache's fallback may prepare on any worker thread
  std::unique_ptr<PassthroughFile> direct_owner_;
  std::atomic<PassthroughFile*> direct_{nullptr};
};

// The engine's own open of the caller's file (a new open file description through /proc):
// never O_APPEND, since Linux's pwrite on an O_APPEND description appends whatever the offset
// and the engine writes pages at their places (write-back, appends placed at the engine's
// size); and read-write for a caller that opened write-only where the daemon may, since a
// write-back write of part of a page reads the rest of it. O_SYNC and O_DSYNC carry over.
// O_NOATIME wherever the daemon may (EPERM otherwise: not the file's owner, no CAP_FOWNER):
// what the engine reads (misses, read-ahead, the rest of a page a write-back write covers in
// part) is the cache's reading, and a caller's reads mark the access time themselves
// (operations_files.cc). The kernel still checks every read and write against the caller's
// own open mode.
//
// `flags`: the caller's descriptor's (F_GETFL); `read_only`: the caller can neither write nor
// truncate the file. Returns the descriptor, or -1 with errno set.
int engine_descriptor(int caller_fd, int flags, bool read_only) {
  const std::string path = proc_path(caller_fd);
  const int kept = (flags & (O_SYNC | O_DSYNC)) | O_CLOEXEC;
  const int access = flags & O_ACCMODE;
  auto reopen = [&](int mode) {
    UniqueFd fd(::open(path.c_str(), kept | mode | O_NOATIME));
    if (!fd.valid() && errno == EPERM) fd = UniqueFd(::open(path.c_str(), kept | mode));
    return fd;
  };
  UniqueFd fd = reopen(read_only ? O_RDONLY : O_RDWR);
  if (!fd.valid() && access == O_WRONLY) fd = reopen(O_WRONLY);
  return fd.release();
}

// The engine's backing file for the caller's open. A reader's is opened at its first miss (a
// hit costs no backing open: a round trip on a network store), through a duplicate of the
// caller's descriptor (the O_PATH one while the caller's is not opened: closing that sends the
// backing no flush); should the daemon no longer be allowed to open it then (its mode changed
// since, for a daemon without CAP_DAC_OVERRIDE), the misses read through the caller's open
// descriptor, as the caller's open allows, if it has one. A writer's is opened now: its first
// call is a write or a truncate anyway, and a write must not meet a permission the open did not
// check.
SysResult<std::unique_ptr<cache::BackingFile>> engine_backing_file(CallerBackingFd& caller, int open_flags,
                                                                  const std::string& relative_path,
                                                                  cache::BackingReads reads) {
  auto caller_flags = caller.flags();
  if (!caller_flags.is_ok()) return Errno{caller_flags.error()};
  const int flags = *caller_flags;
  // O_RDONLY | O_TRUNC truncates on Linux (the caller may write the file, or the open failed):
  // the engine must be able to truncate too.
  const bool read_only = (flags & O_ACCMODE) == O_RDONLY && (open_flags & O_TRUNC) == 0;
  if (!read_only) {
    auto caller_fd = caller.get();
    if (!caller_fd.is_ok()) return Errno{caller_fd.error()};
    const int fd = engine_descriptor(*caller_fd, flags, false);
    if (fd < 0) return last_errno();
    return cache::adopt_posix_backing_file(fd, relative_path, reads);
  }
  const int reference = ::fcntl(caller.reference(), F_DUPFD_CLOEXEC, 0);
  if (reference < 0) return last_errno();
  const bool reference_reads = caller.opened();  // not the O_PATH one, which reads nothing
  return cache::adopt_posix_backing_file_opened_on_use(
      reference, relative_path, [flags, reference_reads](int reference_fd) {
        const int fd = engine_descriptor(reference_fd, flags, true);
        if (fd >= 0 || (errno != EACCES && errno != EPERM) || !reference_reads) return fd;
        return ::fcntl(reference_fd, F_DUPFD_CLOEXEC, 0);
      },
      reads);
}


}  // namespace

EngineFileData::EngineFileData(std::unique_ptr<cache::MountedCache> cache, CacheSupervisor::Options supervision,
                               bool write_back, cache::BackingReads backing_reads)
    : supervisor_(std::move(cache), std::move(supervision)), write_back_(write_back), backing_reads_(backing_reads) {}
EngineFileData::~EngineFileData() = default;

SysResult<std::unique_ptr<OpenFile>> EngineFileData::open(OpenRequest request) {
  const struct statx* st = &request.attributes;
  if (request.bypass_cache || request.relative_path.empty() || !S_ISREG(st->stx_mode) || st->stx_nlink > 1) {
    // A file the engine still writes back after its close reaches the backing file first.
    if (!request.relative_path.empty() && S_ISREG(st->stx_mode)) {
      if (auto written = write_back_closed(request.relative_path, *st); !written.is_ok()) return Errno{written.error()};
    }
    ++bypassed_opens_;
    return PassthroughFile::open(*request.backing);
  }
  std::shared_ptr<cache::MountedCache> cache = supervisor_.running();
  const BackingAttributes attributes = cache::attributes_of_statx(*st);
  if (cache == nullptr) return open_around_stopped_cache(std::move(request), attributes);
  auto backing = engine_backing_file(*request.backing, request.flags, request.relative_path, backing_reads_);
  if (!backing.is_ok()) return Errno{backing.error()};
  auto handle = cache->engine().open_file(request.relative_path, std::move(*backing), attributes);
  if (!handle.is_ok()) {
    if (supervisor_.stopped_after_failure(*cache)) return open_around_stopped_cache(std::move(request), attributes);
    return errno_for(handle.status());
  }
  auto file = std::make_unique<EngineOpenFile>(std::move(cache), supervisor_, *handle, std::move(request.backing),
                                               request.flags, write_back_);
  if ((request.flags & O_TRUNC) != 0) {
    // open(2) emptied the backing file (O_RDONLY | O_TRUNC too, on Linux); a file the engine
    // already had open keeps its pages and size until told.
    if (auto truncated = file->truncate(0); !truncated.is_ok()) return Errno{truncated.error()};
  }
  return std::unique_ptr<OpenFile>(std::move(file));
}

SysResult<std::unique_ptr<OpenFile>> EngineFileData::open_around_stopped_cache(
    OpenRequest request, const BackingAttributes& attributes) {
  struct stat st {};
  st.st_dev = static_cast<dev_t>(attributes.device);
  st.st_ino = static_cast<ino_t>(attributes.inode);
  if (supervisor_.holds_unwritten(request.relative_path, st)) {
    ++refused_opens_;
    return Errno{EIO};
  }
  ++opens_while_stopped_;
  return PassthroughFile::open(*request.backing);
}

SysResult<bool> EngineFileData::cut_power() {
  std::shared_ptr<cache::MountedCache> cache = supervisor_.running();
  if (cache == nullptr) return Errno{EIO};
  if (Status s = cache->cut_power_at_next_program(); !s.is_ok()) return errno_for(s);
  return true;
}

SysResult<bool> EngineFileData::truncate_unopened(int path_fd, const std::string& relative_path,
                                                   std::uint64_t size_bytes) {
  UniqueFd fd(::open(proc_path(path_fd).c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return last_errno();
  auto attributes = statx_of(fd.get(), STATX_BASIC_STATS | STATX_BTIME);
  if (!attributes.is_ok()) return Errno{attributes.error()};
  OpenRequest request{std::make_unique<CallerBackingFd>(std::move(fd)), *attributes, O_WRONLY, relative_path};
  auto file = open(std::move(request));
  if (!file.is_ok()) return Errno{file.error()};
  return (*file)->truncate(size_bytes);
}

SysResult<bool> EngineFileData::write_back_unopened(int path_fd, const std::string& relative_path) {
  std::shared_ptr<cache::MountedCache> cache = supervisor_.running();
  if (cache == nullptr || !cache->engine().delays_write_back()) return true;
  auto attributes = statx_of(path_fd, STATX_BASIC_STATS | STATX_BTIME);
  if (!attributes.is_ok()) return Errno{attributes.error()};
  return write_back_closed(relative_path, *attributes);
}

SysResult<bool> EngineFileData::write_back_closed(const std::string& relative_path, const struct statx& attributes) {
  std::shared_ptr<cache::MountedCache> cache = supervisor_.running();
  if (cache == nullptr || !cache->engine().delays_write_back()) return true;
  Status s = cache->engine().write_back_closed(relative_path, cache::attributes_of_statx(attributes));
  if (!s.is_ok()) return errno_for(s);
  return true;
}

// A stopped cache is not told (its restart finds what changed behind it, as after a power cut);
// the supervisor keeps the names of the files it holds data of.
void EngineFileData::renamed(const std::string& old_relative_path, const std::string& new_relative_path,
                             bool exchange) {
  std::shared_ptr<cache::MountedCache> cache = supervisor_.running();
  if (cache == nullptr) return supervisor_.renamed_while_stopped(old_relative_path, new_relative_path, exchange);
  const auto kind = exchange ? cache::RenameKind::exchange : cache::RenameKind::replace;
  Status s = cache->engine().renamed(old_relative_path, new_relative_path, kind);
  if (!s.is_ok() && !supervisor_.stopped_after_failure(*cache))
    spdlog::error("the cache could not follow the rename of {}: {}", old_relative_path, s.to_string());
}

void EngineFileData::unlinked(const std::string& relative_path) {
  std::shared_ptr<cache::MountedCache> cache = supervisor_.running();
  if (cache == nullptr) return supervisor_.unlinked_while_stopped(relative_path);
  Status s = cache->engine().unlinked(relative_path);
  if (!s.is_ok() && !supervisor_.stopped_after_failure(*cache))
    spdlog::error("the cache could not forget {}: {}", relative_path, s.to_string());
}

Status EngineFileData::close() { return supervisor_.close(); }

std::vector<StatsSection> EngineFileData::stats() const {
  std::vector<StatsSection> sections;
  supervisor_.inspect([&](cache::MountedCache& cache) {
    // The engine's figures keep their JSON types (numbers stay numbers in stats.json).
    StatsSection section{"cache", {}};
    // What turns the page counts below into bytes.
    section.rows.emplace_back("page_size_bytes", std::uint64_t{cache.ftl().page_size_bytes()});
    const cache::EngineStats stats = cache.engine().stats();
    const auto figures = nlohmann::ordered_json::parse(cache::stats_json(stats));
    for (auto it = figures.begin(); it != figures.end(); ++it) {
      if (it->is_number_unsigned()) {
        section.rows.emplace_back(it.key(), it->get<std::uint64_t>());
      } else if (it->is_number()) {
        section.rows.emplace_back(it.key(), it->get<double>());
      } else if (it->is_boolean()) {
        section.rows.emplace_back(it.key(), it->get<bool>());
      } else {
        section.rows.emplace_back(it.key(), it->dump());
      }
    }
    section.rows.emplace_back("bypassed_opens", bypassed_opens_.load());
    StatsSection identity{"identity", {}};
    identity.rows.emplace_back("rule", std::string(identity_rule_name(cache.engine().identity_rule())));
    // The files whose fsync'd data the restart found lost, each with why (none: empty).
    StatsSection losses{"restart_losses", {}};
    for (std::size_t i = 0; i < stats.restart.losses.size(); ++i)
      losses.rows.emplace_back(std::to_string(i + 1), stats.restart.losses[i]);
    sections = {section, identity, losses, ftl_stats_section(cache.engine().ftl_stats(), cache.ftl().options())};
  });
  StatsSection health = supervisor_.stats();
  health.rows.emplace_back("opens_while_stopped", opens_while_stopped_.load());
  health.rows.emplace_back("refused_opens", refused_opens_.load());
  sections.push_back(std::move(health));
  return sections;
}

}  // namespace flashdir::fs
