// The backing store on a real directory. Every path is resolved one component at a time with
// openat(O_NOFOLLOW) below a directory descriptor of the root, so that neither a symlink nor
// ".." in the backing tree can lead the cache outside it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "flashdir/cache/backing_store.h"
#include "flashdir/file_io.h"

namespace flashdir::cache {
namespace {

// The code says how flashdir itself reacts (ENOSPC and EDQUOT alike mean "full"); the errno
// rides along so that the daemon answers its caller with exactly what the backing file system
// said (EDQUOT, EFBIG, EROFS, EOPNOTSUPP, ...).
Status errno_status(int error, std::string_view what, std::string_view path) {
  StatusCode code = StatusCode::io_error;
  if (error == ENOENT) {
    code = StatusCode::not_found;
  } else if (error == ELOOP || error == ENOTDIR || error == EISDIR || error == EINVAL || error == EOPNOTSUPP) {
    code = StatusCode::invalid_argument;
  } else if (error == ENOSPC || error == EDQUOT) {
    code = StatusCode::no_space;
  }
  return Status(code, fmt::format("{} {}: {}", what, path, std::strerror(error))).with_errno(error);
}

std::int64_t nanoseconds(const struct statx_timestamp& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// statx: the birth time (where the file system keeps one) proves an inode number was not reused.
Result<struct statx> statx_of(int fd, std::string_view path) {
  struct statx st {};
  if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) != 0)
    return errno_status(errno, "stat of", path);
  return st;
}

}  // namespace

BackingAttributes attributes_of_statx(const struct statx& st) {
  BackingAttributes a;
  a.device = makedev(st.stx_dev_major, st.stx_dev_minor);
  a.inode = st.stx_ino;
  a.birth_ns = (st.stx_mask & STATX_BTIME) != 0 ? nanoseconds(st.stx_btime) : 0;
  a.uid = st.stx_uid;
  a.gid = st.stx_gid;
  a.size_bytes = st.stx_size;
  a.mtime_ns = nanoseconds(st.stx_mtime);
  a.ctime_ns = nanoseconds(st.stx_ctime);
  a.link_count = st.stx_nlink;
  return a;
}

namespace {

// O_NOATIME where the daemon may (it owns the file, or has CAP_FOWNER): the cache's own reads
// of a backing file must not change what its users see. Elsewhere the open goes on without it.
int open_without_atime(int dir_fd, const char* name, int flags) {
  const int fd = ::openat(dir_fd, name, flags | O_NOATIME);
  if (fd >= 0 || errno != EPERM) return fd;
  return ::openat(dir_fd, name, flags);
}

class PosixBackingFile final : public BackingFile {
 public:
  PosixBackingFile(UniqueFd fd, std::string path, BackingReads reads = {})
      : fd_(std::move(fd)), path_(std::move(path)), reads_(reads) {}

  Result<std::size_t> read(std::uint64_t offset, ByteSpan out) override {
    if (reads_.direct_above_bytes != 0 && out.size() > reads_.direct_above_bytes &&
        !reads_.direct_refused->load(std::memory_order_relaxed)) {
      if (const int direct = direct_descriptor(); direct >= 0) {
        auto got = read_whole(direct, offset, out);
        if (got.is_ok() || got.status().sys_errno() != EINVAL) return got;
        refuse_direct(got.status());
      }
    }
    const std::size_t piece = reads_.parallel_piece_bytes;
    if (piece == 0 || out.size() <= piece) return read_whole(fd_.get(), offset, out);
    // Pieces after the first from threads of their own (or in this thread at get(), where no
    // thread can be made: libstdc++'s fallback), the first from this one; every piece is
    // waited for before the count is made, since they write into `out`.
    std::vector<std::future<Result<std::size_t>>> rest;
    for (std::size_t at = piece; at < out.size(); at += piece) {
      const ByteSpan part = out.subspan(at, std::min(piece, out.size() - at));
      rest.push_back(std::async(std::launch::async | std::launch::deferred,
                                [this, offset, at, part] { return read_whole(fd_.get(), offset + at, part); }));
    }
    std::vector<Result<std::size_t>> got;
    got.push_back(read_whole(fd_.get(), offset, out.first(piece)));
    for (auto& pending : rest) got.push_back(pending.get());
    // As one read would count: up to the first piece the end of the file cut short.
    std::size_t done = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!got[i].is_ok()) return got[i].status();
      done += *got[i];
      if (*got[i] < std::min(piece, out.size() - i * piece)) break;
    }
    return done;
  }

  Status write(std::uint64_t offset, ConstByteSpan data) override {
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::pwrite(fd_.get(), data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_status(errno, "writing", path_);
      done += static_cast<std::size_t>(n);
    }
    return Status::ok();
  }

  Status truncate(std::uint64_t size_bytes) override {
    if (::ftruncate(fd_.get(), static_cast<off_t>(size_bytes)) != 0) return errno_status(errno, "truncating", path_);
    return Status::ok();
  }

  Status allocate(int mode, std::uint64_t offset, std::uint64_t length) override {
    if (::fallocate(fd_.get(), mode, static_cast<off_t>(offset), static_cast<off_t>(length)) != 0)
      return errno_status(errno, "allocating in", path_);
    return Status::ok();
  }

  Status sync() override {
    if (::fdatasync(fd_.get()) != 0) return errno_status(errno, "syncing", path_);
    return Status::ok();
  }

  Result<BackingAttributes> stat() override {
    auto st = statx_of(fd_.get(), path_);
    // A store that forgot the file behind an open descriptor has removed its last name: a FUSE
    // store's file unlinked while open (libfuse's high-level API with hard_remove), an NFS
    // file another client removed. It reads as a file with no link left.
    if (!st.is_ok() && st.status().sys_errno() == ESTALE) return BackingAttributes{.link_count = 0};
    if (!st.is_ok()) return st.status();
    return attributes_of_statx(*st);
  }

 private:
  // Up to out.size() bytes at `offset` through `fd`, pread after pread; fewer only at end of file.
  Result<std::size_t> read_whole(int fd, std::uint64_t offset, ByteSpan out) const {
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_status(errno, "reading", path_);
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  // The file's descriptor for direct reads (BackingReads), opened at the first call through
  // the process's view of `fd_`, read-only; -1 where it could not be opened.
  int direct_descriptor() {
    std::call_once(direct_opened_, [this] {
      const std::string path = proc_path(fd_.get());
      const int flags = O_RDONLY | O_DIRECT | O_CLOEXEC;
      direct_fd_ = UniqueFd(::open(path.c_str(), flags | O_NOATIME));
      if (!direct_fd_.valid() && errno == EPERM) direct_fd_ = UniqueFd(::open(path.c_str(), flags));
      if (!direct_fd_.valid() && errno == EINVAL)
        refuse_direct(errno_status(EINVAL, "opening for direct reads", path_));
    });
    return direct_fd_.get();
  }

  void refuse_direct(const Status& why) {
    if (!reads_.direct_refused->exchange(true))
      spdlog::warn("the backing store refuses direct reads ({}): long reads go through its page cache from now on",
                   why.to_string());
  }

  UniqueFd fd_;
  std::string path_;
  BackingReads reads_;
  std::once_flag direct_opened_;
  UniqueFd direct_fd_;
};

// A PosixBackingFile made at its first use; stat() answers from the reference descriptor until then.
class OpenedOnUseBackingFile final : public BackingFile {
 public:
  OpenedOnUseBackingFile(UniqueFd reference, std::string path, std::function<int(int)> open, BackingReads reads)
      : reference_(std::move(reference)), path_(std::move(path)), open_(std::move(open)), reads_(reads) {}

  Result<std::size_t> read(std::uint64_t offset, ByteSpan out) override {
    auto file = opened();
    if (!file.is_ok()) return file.status();
    return (*file)->read(offset, out);
  }
  Status write(std::uint64_t offset, ConstByteSpan data) override {
    auto file = opened();
    return file.is_ok() ? (*file)->write(offset, data) : file.status();
  }
  Status truncate(std::uint64_t size_bytes) override {
    auto file = opened();
    return file.is_ok() ? (*file)->truncate(size_bytes) : file.status();
  }
  Status allocate(int mode, std::uint64_t offset, std::uint64_t length) override {
    auto file = opened();
    return file.is_ok() ? (*file)->allocate(mode, offset, length) : file.status();
  }
  Status sync() override {
    auto file = opened();
    return file.is_ok() ? (*file)->sync() : file.status();
  }
  Result<BackingAttributes> stat() override {
    if (BackingFile* file = file_.load(std::memory_order_acquire)) return file->stat();
    std::lock_guard lock(mutex_);  // the reference stays open meanwhile
    if (owner_ != nullptr) return owner_->stat();
    auto st = statx_of(reference_.get(), path_);
    if (!st.is_ok()) return st.status();
    return attributes_of_statx(*st);
  }

 private:
  Result<BackingFile*> opened() {
    if (BackingFile* file = file_.load(std::memory_order_acquire)) return file;
    std::lock_guard lock(mutex_);
    if (owner_ == nullptr) {
      const int fd = open_(reference_.get());
      if (fd < 0) return errno_status(errno, "opening", path_);
      owner_ = std::make_unique<PosixBackingFile>(UniqueFd(fd), path_, reads_);
      reference_ = UniqueFd();
      file_.store(owner_.get(), std::memory_order_release);
    }
    return owner_.get();
  }

  std::mutex mutex_;  // the first use opens the file once; guards reference_ and owner_
  UniqueFd reference_;
  const std::string path_;
  const std::function<int(int)> open_;
  const BackingReads reads_;
  std::unique_ptr<PosixBackingFile> owner_;
  std::atomic<BackingFile*> file_{nullptr};  // owner_ once opened, read without the mutex
};

// Splits "a/b/c" into its components; refuses empty, absolute and dot components.
Result<std::vector<std::string>> components_of(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..")
      return Status::invalid_argument(fmt::format("backing path '{}' is not a plain relative path", path));
    parts.emplace_back(part);
    start = slash + 1;
  }
  return parts;
}

class PosixBackingStore final : public BackingStore {
 public:
  PosixBackingStore(UniqueFd root, std::string canonical_path)
      : root_(std::move(root)), canonical_path_(std::move(canonical_path)) {}

  Result<BackingRoot> root() override {
    auto st = statx_of(root_.get(), canonical_path_);
    if (!st.is_ok()) return st.status();
    struct statfs fs {};
    if (::fstatfs(root_.get(), &fs) != 0) return errno_status(errno, "statfs of", canonical_path_);
    BackingRoot root;
    root.record.path = canonical_path_;
    root.record.fs_type = static_cast<std::uint64_t>(fs.f_type);
    std::uint64_t fs_id = 0;
    static_assert(sizeof fs.f_fsid == sizeof fs_id);
    std::memcpy(&fs_id, &fs.f_fsid, sizeof fs_id);
    root.record.fs_id = fs_id;
    root.record.root_inode = st->stx_ino;
    root.record.root_birth_ns = (st->stx_mask & STATX_BTIME) != 0 ? nanoseconds(st->stx_btime) : 0;
    root.device = makedev(st->stx_dev_major, st->stx_dev_minor);
    root.stable_inode_numbers = fs.f_type != kFuseSuperMagic;
    return root;
  }

  Result<std::unique_ptr<BackingFile>> open(std::string_view relative_path) override {
    auto parent = parent_of(relative_path);
    if (!parent.is_ok()) return parent.status();
    const std::string& name = parent->second;
    int fd = open_without_atime(parent->first.get(), name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
      fd = open_without_atime(parent->first.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "opening", relative_path);
    UniqueFd file(fd);
    struct stat st {};
    if (::fstat(file.get(), &st) != 0) return errno_status(errno, "stat of", relative_path);
    if (!S_ISREG(st.st_mode))
      return Status::invalid_argument(fmt::format("backing path '{}' is not a regular file", relative_path));
    return std::unique_ptr<BackingFile>(std::make_unique<PosixBackingFile>(std::move(file), std::string(relative_path)));
  }

  Status rename(std::string_view from, std::string_view to) override {
    auto source = parent_of(from);
    if (!source.is_ok()) return source.status();
    auto target = parent_of(to);
    if (!target.is_ok()) return target.status();
    if (::renameat(source->first.get(), source->second.c_str(), target->first.get(), target->second.c_str()) != 0)
      return errno_status(errno, "renaming", from);
    return Status::ok();
  }

  Status unlink(std::string_view relative_path) override {
    auto parent = parent_of(relative_path);
    if (!parent.is_ok()) return parent.status();
    if (::unlinkat(parent->first.get(), parent->second.c_str(), 0) != 0)
      return errno_status(errno, "removing", relative_path);
    return Status::ok();
  }

 private:
  // The directory holding the last component (opened without following any symlink) and the
  // last component's name.
  Result<std::pair<UniqueFd, std::string>> parent_of(std::string_view relative_path) const {
    auto parts = components_of(relative_path);
    if (!parts.is_ok()) return parts.status();
    UniqueFd dir(::fcntl(root_.get(), F_DUPFD_CLOEXEC, 0));
    if (!dir.valid()) return errno_status(errno, "duplicating the backing root for", relative_path);
    for (std::size_t i = 0; i + 1 < parts->size(); ++i) {
      UniqueFd next(::openat(dir.get(), (*parts)[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!next.valid()) return errno_status(errno, "resolving", relative_path);
      dir = std::move(next);
    }
    return std::pair<UniqueFd, std::string>(std::move(dir), std::move(parts->back()));
  }

  static constexpr long kFuseSuperMagic = 0x65735546;  // FUSE_SUPER_MAGIC (linux/magic.h)
  UniqueFd root_;
  std::string canonical_path_;
};

}  // namespace

Result<std::unique_ptr<BackingStore>> open_posix_backing_store(const std::filesystem::path& root) {
  std::error_code error;
  const auto canonical = std::filesystem::canonical(root, error);
  if (error) return errno_status(error.value(), "resolving the backing directory", root.string());
  UniqueFd fd(::open(canonical.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno_status(errno, "opening the backing directory", root.string());
  return std::unique_ptr<BackingStore>(std::make_unique<PosixBackingStore>(std::move(fd), canonical.string()));
}

std::unique_ptr<BackingFile> adopt_posix_backing_file(int fd, std::string_view relative_path, BackingReads reads) {
  return std::make_unique<PosixBackingFile>(UniqueFd(fd), std::string(relative_path), reads);
}

std::unique_ptr<BackingFile> adopt_posix_backing_file_opened_on_use(int reference, std::string_view relative_path,
                                                                    std::function<int(int reference)> open,
                                                                    BackingReads reads) {
  return std::make_unique<OpenedOnUseBackingFile>(UniqueFd(reference), std::string(relative_path), std::move(open),
                                                  reads);
}

}  // namespace flashdir::cache
