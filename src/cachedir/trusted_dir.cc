#include "flashdir/trusted_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <system_error>

#include "flashdir/cache_dir.h"
#include "flashdir/cache_lock.h"

namespace flashdir {

namespace fs = std::filesystem;

namespace {

constexpr mode_t kPrivateDirMode = 0700;
constexpr mode_t kPrivateFileMode = 0600;

bool writable_by_others(mode_t mode) { return (mode & (S_IWGRP | S_IWOTH)) != 0; }
std::string mode_text(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

// What the check found wrong: refused under TrustPolicy::enforce, a warning under warn.
class Findings {
 public:
  Findings(TrustPolicy policy, std::vector<std::string>& warnings) : policy_(policy), warnings_(warnings) {}
  Status problem(std::string message) {
    if (policy_ == TrustPolicy::enforce) return Status::invalid_argument(std::move(message));
    warnings_.push_back(std::move(message));
    return Status::ok();
  }
  bool enforce() const { return policy_ == TrustPolicy::enforce; }
  void warn(std::string message) { warnings_.push_back(std::move(message)); }

 private:
  TrustPolicy policy_;
  std::vector<std::string>& warnings_;
};

// A directory above the cache: whoever may rename entries in it can put another directory where
// the cache was. A sticky directory (/tmp) lets only an entry's owner rename it, and the next
// level's owner is checked in turn.
Status check_above(const fs::path& path, const struct stat& st, const fs::path& cache, Findings& findings) {
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    return findings.problem(fmt::format(
        "{} is owned by user {}, who could replace the cache directory {} below it; keep a cache under directories "
        "owned by you or root",
        path.string(), st.st_uid, cache.string()));
  }
  if (writable_by_others(st.st_mode) && (st.st_mode & S_ISVTX) == 0) {
    return findings.problem(fmt::format(
        "{} is writable by group or others (mode {}), who could replace the cache directory {} below it; chmod go-w "
        "{} or keep the cache elsewhere",
        path.string(), mode_text(st.st_mode), cache.string(), path.string()));
  }
  return Status::ok();
}

// The cache directory itself.
Status check_cache_itself(const fs::path& path, const struct stat& st, Findings& findings) {
  if (st.st_uid != ::geteuid()) {
    return findings.problem(fmt::format(
        "cache directory {} is owned by user {}, not by user {} who runs this: its owner can read and change what "
        "it caches; give a directory of your own (or remove this one and let flashdir make it)",
        path.string(), st.st_uid, ::geteuid()));
  }
  if (writable_by_others(st.st_mode)) {
    return findings.problem(fmt::format(
        "cache directory {} is writable by group or others (mode {}): anyone may have put files in it for flashdir "
        "to trust; remove it and let flashdir make it afresh, or check what it holds and chmod 700 it",
        path.string(), mode_text(st.st_mode)));
  }
  // Readable only: make_private() closes it once the caller takes it.
  if ((st.st_mode & 077) != 0 && !findings.enforce()) {
    findings.warn(fmt::format("cache directory {} is mode {}: other users can read what it caches; chmod 700 it",
                              path.string(), mode_text(st.st_mode)));
  }
  return Status::ok();
}

// The entries flashdir opens in a cache directory.
Status check_entries(int dir_fd, const fs::path& dir, Findings& findings) {
  const CacheDirPaths paths(dir);
  struct Entry {
    std::string name;
    bool directory;
  };
  const Entry entries[] = {{paths.superblock.filename().string(), false},
                           {paths.image.filename().string(), false},
                           {paths.catalog.filename().string(), true},
                           {paths.restart_image.filename().string(), false},
                           {kLockFileName, false},
                           {kLogFileName, false}};
  for (const Entry& entry : entries) {
    const fs::path path = dir / entry.name;
    struct stat st {};
    if (::fstatat(dir_fd, entry.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return errno_status(fmt::format("examining {}", path.string()));
    }
    Status found;
    if (S_ISLNK(st.st_mode)) {
      found = findings.problem(fmt::format(
          "{} is a symbolic link: flashdir never follows a link in a cache directory (it would write where the link "
          "points); remove it",
          path.string()));
    } else if (entry.directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
      found = findings.problem(fmt::format("{} is not a {}; remove it", path.string(),
                                           entry.directory ? "directory" : "regular file"));
    } else if (st.st_uid != ::geteuid()) {
      found = findings.problem(fmt::format("{} is owned by user {}, not by user {} who runs this; remove it",
                                           path.string(), st.st_uid, ::geteuid()));
    } else if (!entry.directory && st.st_nlink != 1) {
      found = findings.problem(fmt::format(
          "{} has {} names (hard links): writing it would change the file behind its other names; remove it",
          path.string(), st.st_nlink));
    } else if (writable_by_others(st.st_mode)) {
      found = findings.problem(fmt::format("{} is writable by group or others (mode {}); chmod go-w it",
                                           path.string(), mode_text(st.st_mode)));
    }
    FLASHDIR_TRY(found);
  }
  return Status::ok();
}

// Opens `name` in `parent_fd` as a directory, without following a link; makes it (0700) first if
// it is missing and `create` allows it for this level, recording it in `created`.
Result<UniqueFd> open_level(int parent_fd, const std::string& name, const fs::path& path, const fs::path& cache,
                            CreateDirs create, bool last, std::vector<fs::path>& created) {
  constexpr int kFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::openat(parent_fd, name.c_str(), kFlags));
  if (fd.valid()) return fd;
  if (errno == ENOENT) {
    if (create == CreateDirs::none) return Status::not_found(fmt::format("{} does not exist", path.string()));
    if (create == CreateDirs::last && !last)
      return Status::not_found(fmt::format("cannot create directory {}: {} does not exist", cache.string(), path.string()));
    if (::mkdirat(parent_fd, name.c_str(), kPrivateDirMode) != 0)
      return errno_status(fmt::format("cannot create directory {}", path.string()));
    created.push_back(path);
    // The umask may have taken bits away; nobody else can have the directory yet.
    if (::fchmodat(parent_fd, name.c_str(), kPrivateDirMode, 0) != 0)
      return errno_status(fmt::format("cannot make directory {} private", path.string()));
    fd = UniqueFd(::openat(parent_fd, name.c_str(), kFlags));
    if (fd.valid()) return fd;
  }
  if (errno == ELOOP || errno == ENOTDIR) {
    struct stat st {};
    const bool link = ::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
    return Status::invalid_argument(
        fmt::format("{} {}", path.string(),
                    link ? "is a symbolic link that leads to no directory now; give the directory's own path"
                         : "exists and is not a directory"));
  }
  return errno_status(fmt::format("cannot open directory {}", path.string()));
}

}  // namespace

Result<TrustedDir> open_trusted_dir(const fs::path& dir, TrustPolicy policy, CreateDirs create) {
  if (dir.empty()) return Status::invalid_argument("the cache directory path is empty");
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error);
  // Links in the part that exists are resolved here; the walk below follows none.
  const fs::path canonical = error ? fs::path() : fs::weakly_canonical(absolute, error);
  if (error) return Status::invalid_argument(fmt::format("cache directory {}: {}", dir.string(), error.message()));
  std::vector<std::string> names;
  for (const auto& part : canonical.relative_path()) {
    if (!part.empty()) names.push_back(part.string());
  }
  if (names.empty()) return Status::invalid_argument(fmt::format("{} cannot be a cache directory", canonical.string()));

  TrustedDir trusted;
  trusted.path = canonical;
  Findings findings(policy, trusted.warnings);
  UniqueFd at(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  fs::path walked = "/";
  struct stat st {};
  if (!at.valid() || ::fstat(at.get(), &st) != 0) return errno_status("opening /");
  FLASHDIR_TRY(check_above(walked, st, canonical, findings));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool last = i + 1 == names.size();
    const fs::path path = walked / names[i];
    auto next = open_level(at.get(), names[i], path, canonical, create, last, trusted.created);
    if (!next.is_ok()) return next.status();
    if (::fstat(next->get(), &st) != 0) return errno_status(fmt::format("examining {}", path.string()));
    if (last) {
      FLASHDIR_TRY(check_cache_itself(path, st, findings));
    } else {
      FLASHDIR_TRY(check_above(path, st, canonical, findings));
    }
    at = std::move(next.value());
    walked = path;
  }
  FLASHDIR_TRY(check_entries(at.get(), canonical, findings));
  for (const auto& entry : fs::directory_iterator(canonical, error)) trusted.found.insert(entry.path().filename().string());
  if (error) return Status::io_error(fmt::format("listing {}: {}", canonical.string(), error.message()));
  trusted.fd = std::move(at);
  return trusted;
}

Status make_private(TrustedDir& dir) {
  struct stat st {};
  if (::fstat(dir.fd.get(), &st) != 0) return errno_status(fmt::format("examining {}", dir.path.string()));
  if ((st.st_mode & 077) == 0) return Status::ok();
  // The descriptor is O_PATH: its /proc link names the directory itself, whatever its path does.
  const mode_t tightened = st.st_mode & kPrivateDirMode;
  if (::chmod(proc_path(dir.fd.get()).c_str(), tightened) != 0)
    return errno_status(fmt::format("making cache directory {} private", dir.path.string()));
  dir.warnings.push_back(fmt::format("cache directory {} was mode {}, readable by other users; now {}",
                                     dir.path.string(), mode_text(st.st_mode), mode_text(tightened)));
  return Status::ok();
}

Result<UniqueFd> open_in_dir(const TrustedDir& dir, const std::string& name, int flags) {
  const fs::path path = dir.path / name;
  UniqueFd fd(::openat(dir.fd.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, kPrivateFileMode));
  if (!fd.valid()) {
    if (errno == ELOOP)
      return Status::invalid_argument(
          fmt::format("{} is a symbolic link: flashdir never follows a link in a cache directory; remove it",
                      path.string()));
    const int error = errno;
    return errno_status(fmt::format("opening {}", path.string())).with_errno(error);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_status(fmt::format("examining {}", path.string()));
  if (!S_ISREG(st.st_mode)) return Status::invalid_argument(fmt::format("{} is not a regular file; remove it", path.string()));
  // A file opened to be created is 0600 whatever the umask (or the mode an older flashdir gave it).
  if ((flags & O_CREAT) != 0 && (st.st_mode & 07777) != kPrivateFileMode && st.st_uid == ::geteuid() &&
      ::fchmod(fd.get(), kPrivateFileMode) != 0)
    return errno_status(fmt::format("making {} private", path.string()));
  return fd;
}

void remove_created(const TrustedDir& dir) {
  std::error_code ignored;
  if (dir.created.empty()) {
    std::vector<fs::path> added;
    for (const auto& entry : fs::directory_iterator(dir.path, ignored)) {
      if (dir.found.count(entry.path().filename().string()) == 0) added.push_back(entry.path());
    }
    for (const auto& path : added) fs::remove_all(path, ignored);
    return;
  }
  // Every level below the first one made is new, the cache directory last: it holds only what
  // this start put in it. The levels above it go only while empty, in case another start uses
  // them meanwhile.
  fs::remove_all(dir.path, ignored);
  for (auto it = dir.created.rbegin() + 1; it != dir.created.rend(); ++it) ::rmdir(it->c_str());
}

}  // namespace flashdir
