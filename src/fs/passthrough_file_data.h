// FileData that passes every call to the backing file: the daemon's data path until the cache
// engine is plugged in, and what O_DIRECT handles use.
#pragma once

#include "fs/file_data.h"

namespace flashdir::fs {

class PassthroughFileData final : public FileData {
 public:
  SysResult<std::unique_ptr<OpenFile>> open(OpenRequest request) override;
  SysResult<bool> truncate_unopened(int path_fd, const std::string& relative_path, std::uint64_t size_bytes) override;
  void renamed(const std::string&, const std::string&, bool) override {}
  void unlinked(const std::string&) override {}
  Status close() override { return Status::ok(); }
  std::vector<StatsSection> stats() const override;
};

// One backing file descriptor served directly; also the building block of other FileData
// implementations for bypassing I/O.
class PassthroughFile final : public OpenFile {
 public:
  explicit PassthroughFile(UniqueFd fd);
  // The open file of `backing`, opened now if it was left to its first use.
  static SysResult<std::unique_ptr<OpenFile>> open(CallerBackingFd& backing);
  SysResult<std::size_t> read(std::uint64_t offset, ByteSpan out, cache::DeferredFill* later = nullptr) override;
  SysResult<std::size_t> write(std::uint64_t offset, ConstByteSpan in, bool append) override;
  SysResult<bool> truncate(std::uint64_t size_bytes) override;
  SysResult<bool> fallocate(int mode, std::uint64_t offset, std::uint64_t length) override;
  SysResult<bool> fsync(bool data_only) override;
  SysResult<int> backing_fd() override { return fd_.get(); }

 private:
  // Gives the backing descriptor the O_APPEND a write asks for (writes are serialised per
  // inode by the caller).
  SysResult<bool> set_append(bool append);

  UniqueFd fd_;
  bool append_;  // the backing descriptor's O_APPEND
};

}  // namespace flashdir::fs
