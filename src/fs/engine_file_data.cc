#include "fs/engine_file_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fs/ftl_stats_section.h"
#include "fs/passthrough_file_data.h"

namespace flashdir::fs {
namespace {

Errno errno_for(const Status& status) { return Errno{errno_of(status)}; }

class EngineOpenFile final : public OpenFile {
 public:
  EngineOpenFile(cache::Engine& engine, cache::FileHandle handle, UniqueFd fd, bool append)
      : engine_(engine), handle_(handle), fd_(std::move(fd)), append_(append) {}

  ~EngineOpenFile() override {
    if (Status s = engine_.release(handle_); !s.is_ok()) spdlog::error("releasing a cached file: {}", s.to_string());
  }

  SysResult<std::size_t> read(std::uint64_t offset, ByteSpan out) override {
    auto n = engine_.read(handle_, offset, out);
    if (!n.is_ok()) return errno_for(n.status());
    return *n;
  }

  SysResult<std::size_t> write(std::uint64_t offset, ConstByteSpan in) override {
    if (append_) {
      // The backing descriptor appends whatever the offset; the cache must put the bytes where
      // they land. The daemon's per-inode lock keeps other writers through the mount out.
      struct stat st {};
      if (::fstat(fd_.get(), &st) != 0) return last_errno();
      offset = static_cast<std::uint64_t>(st.st_size);
    }
    auto n = engine_.write(handle_, offset, in);
    if (!n.is_ok()) return errno_for(n.status());
    return *n;
  }

  SysResult<bool> truncate(std::uint64_t size_bytes) override {
    if (Status s = engine_.truncate(handle_, size_bytes); !s.is_ok()) return errno_for(s);
    return true;
  }

  SysResult<bool> fallocate(int mode, std::uint64_t offset, std::uint64_t length) override {
    if (Status s = engine_.fallocate(handle_, mode, offset, length); !s.is_ok()) {
      return s.message().find("Operation not supported") != std::string::npos ? Errno{EOPNOTSUPP} : errno_for(s);
    }
    return true;
  }

  SysResult<bool> flush() override {
    // As in PassthroughFile: close a duplicate to collect what the backing defers to close.
    const int duplicate = ::dup(fd_.get());
    if (duplicate < 0) return last_errno();
    if (::close(duplicate) != 0) return last_errno();
    return true;
  }

  SysResult<bool> fsync(bool) override {
    if (Status s = engine_.fsync(handle_); !s.is_ok()) return errno_for(s);
    return true;
  }

  int backing_fd() const override { return fd_.get(); }

 private:
  cache::Engine& engine_;
  cache::FileHandle handle_;
  UniqueFd fd_;
  bool append_;
};

}  // namespace

EngineFileData::EngineFileData(std::unique_ptr<cache::MountedCache> cache) : cache_(std::move(cache)) {}
EngineFileData::~EngineFileData() = default;

SysResult<std::unique_ptr<OpenFile>> EngineFileData::open(OpenRequest request) {
  struct stat st {};
  if (::fstat(request.backing_fd.get(), &st) != 0) return last_errno();
  if (request.relative_path.empty() || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
    ++bypassed_opens_;
    return std::unique_ptr<OpenFile>(std::make_unique<PassthroughFile>(std::move(request.backing_fd)));
  }
  // The engine gets its own descriptor of the same open file (one offset, one O_APPEND).
  const int engine_fd = ::fcntl(request.backing_fd.get(), F_DUPFD_CLOEXEC, 0);
  if (engine_fd < 0) return last_errno();
  cache::Engine& engine = cache_->engine();
  auto handle = engine.open_file(request.relative_path,
                                 cache::adopt_posix_backing_file(engine_fd, request.relative_path));
  if (!handle.is_ok()) return errno_for(handle.status());
  auto file = std::make_unique<EngineOpenFile>(engine, *handle, std::move(request.backing_fd),
                                               (request.flags & O_APPEND) != 0);
  if ((request.flags & O_TRUNC) != 0 && (request.flags & O_ACCMODE) != O_RDONLY) {
    // open(2) emptied the backing file; a file the engine already had open keeps its pages
    // and size until told.
    if (auto truncated = file->truncate(0); !truncated.is_ok()) return Errno{truncated.error()};
  }
  return std::unique_ptr<OpenFile>(std::move(file));
}

SysResult<bool> EngineFileData::truncate_unopened(int path_fd, const std::string& relative_path,
                                                   std::uint64_t size_bytes) {
  const std::string proc_path = "/proc/self/fd/" + std::to_string(path_fd);
  UniqueFd fd(::open(proc_path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return last_errno();
  OpenRequest request{std::move(fd), O_WRONLY, relative_path};
  auto file = open(std::move(request));
  if (!file.is_ok()) return Errno{file.error()};
  return (*file)->truncate(size_bytes);
}

void EngineFileData::renamed(const std::string& old_relative_path, const std::string& new_relative_path) {
  if (Status s = cache_->engine().renamed(old_relative_path, new_relative_path); !s.is_ok())
    spdlog::error("the cache could not follow the rename of {}: {}", old_relative_path, s.to_string());
}

void EngineFileData::unlinked(const std::string& relative_path) {
  if (Status s = cache_->engine().unlinked(relative_path); !s.is_ok())
    spdlog::error("the cache could not forget {}: {}", relative_path, s.to_string());
}

Status EngineFileData::close() { return cache_->close(); }

std::vector<StatsSection> EngineFileData::stats() const {
  StatsSection section{"cache", {}};
  // The engine names its figures once, in its JSON; the types carry over to the stats file.
  const auto figures = nlohmann::ordered_json::parse(cache::stats_json(cache_->engine().stats()));
  for (auto it = figures.begin(); it != figures.end(); ++it) {
    if (it->is_boolean()) section.rows.emplace_back(it.key(), it->get<bool>());
    else if (it->is_number_float()) section.rows.emplace_back(it.key(), it->get<double>());
    else section.rows.emplace_back(it.key(), it->get<std::uint64_t>());
  }
  section.rows.emplace_back("bypassed_opens", bypassed_opens_.load());
  return {section, ftl_stats_section(cache_->engine().ftl_stats())};
}

}  // namespace flashdir::fs
