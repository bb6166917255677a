#include "fs/cache_location.h"

#include <spdlog/spdlog.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdlib>

#include "flashdir/cache_dir.h"
#include "flashdir/size.h"

namespace flashdir::fs {
namespace {

struct OpenedCache {
  format::Superblock superblock;
  bool created = false;
};

// The cache in `dir`, formatted first (mkfs's defaults, `size=`) if it has no superblock: a new
// directory, an empty one, or one holding what an interrupted first mount left.
Result<OpenedCache> open_or_format(const TrustedDir& dir, const CacheLock& lock, const MountOptions& options) {
  const CacheDirPaths paths(dir.path);
  if (!std::filesystem::exists(paths.superblock)) {
    FormatOptions format_options;
    format_options.capacity_bytes = options.new_cache_bytes;
    format_options.force = true;  // a partial cache is replaced; anything else is still refused
    auto superblock = format_locked_cache_dir(dir, lock, format_options);
    if (!superblock.is_ok())
      return superblock.status().with_context(fmt::format("creating cache {}", dir.path.string()));
    spdlog::info("created cache {} ({})", dir.path.string(), format_size(options.new_cache_bytes));
    return OpenedCache{superblock.value(), true};
  }
  if (options.new_cache_size_given)
    spdlog::info("size= ignored: cache {} exists (it keeps the size it was made with)", dir.path.string());
  auto file = read_superblock_file(paths.superblock);
  if (!file.is_ok()) return file.status().with_context(fmt::format("cache {}", dir.path.string()));
  return OpenedCache{file->superblock, false};
}

}  // namespace

Result<std::filesystem::path> default_cache_dir(const std::filesystem::path& canonical_backing, uid_t euid) {
  std::filesystem::path base;
  if (euid == 0) {
    base = "/var/cache";
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    base = std::filesystem::path(home) / ".cache";
  } else {
    return Status::invalid_argument(
        "no cache= given and neither XDG_CACHE_HOME nor HOME is set to place the default one: give -o cache=DIR");
  }
  const std::string text = canonical_backing.string();
  const auto hash = XXH3_64bits(text.data(), text.size());
  std::string name = canonical_backing.filename().string();
  if (name.empty()) name = "root";
  return base / "flashdir" / fmt::format("{}-{:016x}", name, hash);
}

bool is_within(const std::filesystem::path& path, const std::filesystem::path& dir) {
  const auto relative = path.lexically_relative(dir);
  return !relative.empty() && *relative.begin() != "..";
}

Result<TakenCache> take_cache(const MountOptions& options, const std::filesystem::path& canonical_backing) {
  std::filesystem::path dir;
  if (options.cache_dir) {
    dir = *options.cache_dir;
  } else {
    auto default_dir = default_cache_dir(canonical_backing, ::geteuid());
    if (!default_dir.is_ok()) return default_dir.status();
    dir = *default_dir;
  }
  // Checked before anything is created: a cache inside the backing tree would be readable and
  // writable through the mount, image and all.
  std::error_code error;
  const auto absolute = std::filesystem::absolute(dir, error);
  const auto canonical = error ? absolute : std::filesystem::weakly_canonical(absolute, error);
  if (!error && is_within(canonical, canonical_backing)) {
    return Status::invalid_argument(fmt::format(
        "cache directory {} is inside the backing directory {}: its image would be readable and writable through "
        "the mount; give a cache= outside it",
        canonical.string(), canonical_backing.string()));
  }
  auto trusted = open_trusted_dir(dir, TrustPolicy::enforce, CreateDirs::all);
  if (!trusted.is_ok() && !options.cache_dir) {
    // The user named no directory: say which one was chosen for them, and how to choose another.
    return Status(trusted.status().code(),
                  fmt::format("the default cache directory {} cannot be used ({}): give one with -o cache=DIR",
                              dir.string(), trusted.status().message()));
  }
  if (!trusted.is_ok()) return trusted.status();

  // The lock comes first so that two daemons starting on one new cache cannot both format it.
  LockRequest request;
  request.program = kDaemonProgram;
  request.state = "starting";
  request.wait_for_closing = kCloseWait;
  request.on_wait = [](const std::string& message) { spdlog::info("{}", message); };
  auto lock = lock_cache_dir(*trusted, request);
  if (!lock.is_ok()) {
    remove_created(*trusted);
    return lock.status();
  }
  auto opened = open_or_format(*trusted, *lock, options);
  Status taken = opened.status();
  if (taken.is_ok()) taken = make_private(*trusted);
  if (!taken.is_ok()) {
    remove_created(*trusted);
    return taken;
  }
  for (const auto& warning : trusted->warnings) spdlog::warn("{}", warning);
  return TakenCache{std::move(trusted.value()), std::move(lock.value()), opened->superblock, opened->created};
}

}  // namespace flashdir::fs
