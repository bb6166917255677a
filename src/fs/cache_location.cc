#include "fs/cache_location.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "flashdir/cache_dir.h"
#include "flashdir/size.h"

namespace flashdir::fs {
namespace {

constexpr mode_t kCacheDirMode = 0700;

// mkdir -p with every created level 0700: the cache holds copies of files that the backing
// directory may protect, so nobody else may read it.
Status make_private_dirs(const std::filesystem::path& dir) {
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), kCacheDirMode) != 0 && errno != EEXIST)
      return errno_status(fmt::format("creating {}", partial.string()));
  }
  return Status::ok();
}

// True if `dir` holds nothing but what an interrupted first mount may have left: the daemon's
// own files and the parts of a cache that mkfs writes before its superblock. Such a directory
// is formatted (with force, which replaces only those parts); anything else is refused.
bool may_format(const CacheDirPaths& paths) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(paths.dir, error)) {
    const auto& path = entry.path();
    const auto name = path.filename();
    if (name != kLockFileName && path != paths.image && path != paths.catalog)
      return false;
  }
  return !error;
}

Result<UniqueFd> lock_cache(const std::filesystem::path& dir) {
  const auto path = dir / kLockFileName;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return errno_status(fmt::format("opening the lock file {}", path.string()));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return errno_status(fmt::format("locking {}", path.string()));
    char pid_text[32] = {};
    const ssize_t n = ::pread(fd.get(), pid_text, sizeof pid_text - 1, 0);
    const std::string holder = n > 0 ? fmt::format(" (pid {})", std::string(pid_text, static_cast<size_t>(n))) : "";
    return Status::already_exists(
        fmt::format("cache {} is in use by another flashdir daemon{}; unmount it first or choose another cache=",
                    dir.string(), holder));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd.get(), 0) != 0) return errno_status(fmt::format("writing {}", path.string()));
  FLASHDIR_TRY(pwrite_all(fd.get(), ConstByteSpan(reinterpret_cast<const std::uint8_t*>(pid.data()), pid.size()), 0, "lock file"));
  return fd;
}

Result<format::Superblock> format_new_cache(const std::filesystem::path& dir, const MountOptions& options) {
  FormatOptions format_options;
  format_options.capacity_bytes = options.new_cache_bytes;
  format_options.force = true;  // take_cache checked that nothing but a partial cache is there
  auto superblock = format_cache_dir(dir, format_options);
  if (!superblock.is_ok()) return superblock.status().with_context(fmt::format("creating cache {}", dir.string()));
  spdlog::info("created cache {} ({})", dir.string(), format_size(options.new_cache_bytes));
  return superblock;
}

}  // namespace

Result<std::filesystem::path> default_cache_dir(const std::filesystem::path& canonical_backing) {
  std::filesystem::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    base = std::filesystem::path(home) / ".cache";
  } else {
    return Status::invalid_argument("no cache= given and neither XDG_CACHE_HOME nor HOME is set");
  }
  const std::string text = canonical_backing.string();
  const auto hash = XXH3_64bits(text.data(), text.size());
  std::string name = canonical_backing.filename().string();
  if (name.empty()) name = "root";
  return base / "flashdir" / fmt::format("{}-{:016x}", name, hash);
}

Result<TakenCache> take_cache(const MountOptions& options, const std::filesystem::path& canonical_backing) {
  TakenCache taken;
  if (options.cache_dir) {
    taken.dir = std::filesystem::absolute(*options.cache_dir);
  } else {
    auto dir = default_cache_dir(canonical_backing);
    if (!dir.is_ok()) return dir.status();
    taken.dir = *dir;
  }
  FLASHDIR_TRY(make_private_dirs(taken.dir));
  struct stat st {};
  if (::stat(taken.dir.c_str(), &st) != 0) return errno_status(fmt::format("cache {}", taken.dir.string()));
  if (!S_ISDIR(st.st_mode)) return Status::invalid_argument(fmt::format("cache {} is not a directory", taken.dir.string()));
  const CacheDirPaths paths(taken.dir);
  const bool formatted = std::filesystem::exists(paths.superblock);
  if (!formatted && !may_format(paths))
    return Status::invalid_argument(fmt::format(
        "{} is neither a flashdir cache nor empty; give an empty or new directory as cache=", taken.dir.string()));
  if ((st.st_mode & 077) != 0) {
    if (::chmod(taken.dir.c_str(), kCacheDirMode) != 0)
      return errno_status(fmt::format("making cache {} private (mode 0700)", taken.dir.string()));
    spdlog::warn("cache {} was mode {:04o}; now 0700", taken.dir.string(), st.st_mode & 07777);
  }
  // The lock comes first so that two daemons starting on one new cache cannot both format it.
  auto lock = lock_cache(taken.dir);
  if (!lock.is_ok()) return lock.status();
  taken.lock = std::move(*lock);

  if (!std::filesystem::exists(paths.superblock)) {
    auto superblock = format_new_cache(taken.dir, options);
    if (!superblock.is_ok()) return superblock.status();
    taken.superblock = *superblock;
    taken.created = true;
  } else {
    if (options.new_cache_size_given)
      spdlog::info("size= ignored: cache {} exists (it keeps the size it was made with)", taken.dir.string());
    auto file = read_superblock_file(paths.superblock);
    if (!file.is_ok()) return file.status().with_context(fmt::format("cache {}", taken.dir.string()));
    taken.superblock = file->superblock;
  }
  return taken;
}

}  // namespace flashdir::fs
