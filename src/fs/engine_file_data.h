// FileData over the cache engine: regular files opened through the mount are read and written
// through cache::Engine (src/cache). Files the engine does not take pass through: a file with
// more than one hard link (its names would be two cache files, one of them stale after a write
// through the other), and a descriptor whose path the daemon cannot name. While the cache is
// stopped (its disk full or failing: CacheSupervisor) every file passes through, but one whose
// write-back data only the cache holds.
#pragma once

#include <memory>

#include "flashdir/cache/engine.h"
#include "fs/cache_supervisor.h"
#include "fs/file_data.h"

namespace flashdir::fs {

class EngineFileData final : public FileData {
 public:
  // `write_back`: the engine runs in write-back mode (sizes, write-back at close, O_SYNC).
  // `backing_reads`: how the engine's backing files read (fs/backing_kind.h).
  EngineFileData(std::unique_ptr<cache::MountedCache> cache, CacheSupervisor::Options supervision, bool write_back,
                 cache::BackingReads backing_reads);
  ~EngineFileData() override;

  SysResult<std::unique_ptr<OpenFile>> open(OpenRequest request) override;
  bool opens_readers_on_use() const override { return true; }
  SysResult<bool> truncate_unopened(int path_fd, const std::string& relative_path, std::uint64_t size_bytes) override;
  SysResult<bool> write_back_unopened(int path_fd, const std::string& relative_path) override;
  void renamed(const std::string& old_relative_path, const std::string& new_relative_path, bool exchange) override;
  void unlinked(const std::string& relative_path) override;
  Status close() override;
  std::vector<StatsSection> stats() const override;
  SysResult<bool> cut_power() override;

 private:
  // An open served from the backing file while the cache is stopped; EIO for a file whose
  // write-back data the stopped cache holds.
  SysResult<std::unique_ptr<OpenFile>> open_around_stopped_cache(OpenRequest request,
                                                                const BackingAttributes& attributes);
  // What a delayed write-back holds of the file at `relative_path`, into the backing file now.
  SysResult<bool> write_back_closed(const std::string& relative_path, const struct statx& attributes);

  CacheSupervisor supervisor_;
  const bool write_back_;
  const cache::BackingReads backing_reads_;
  std::atomic<std::uint64_t> bypassed_opens_{0};
  std::atomic<std::uint64_t> opens_while_stopped_{0};
  std::atomic<std::uint64_t> refused_opens_{0};  // EIO: write-back data held by the stopped cache
};

}  // namespace flashdir::fs
