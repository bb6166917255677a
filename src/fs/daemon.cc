#include "fs/daemon.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "flashdir/size.h"
#include "fs/backing_kind.h"
#include "fs/cache_location.h"
#include "fs/fatal_signals.h"
#include "fs/kept_attributes.h"
#include "fs/mount_context.h"
#include "fs/operations.h"
#include "flashdir/cache/engine.h"
#include "flashdir/cache_dir.h"
#include "flashdir/ftl/ftl.h"
#include "fs/engine_file_data.h"

namespace flashdir::fs {
namespace {

// O_PATH descriptors the inode table may keep, as a share of RLIMIT_NOFILE: the rest is for
// open files, directory streams, the cache's own files and libfuse.
constexpr std::size_t kInodeFdShareDivisor = 2;
constexpr std::size_t kMinInodeFds = 64;

struct Backing {
  std::filesystem::path canonical;
  UniqueFd fd;  // O_PATH
  struct stat st {};
};

// The backing directory must exist, be a directory, and be readable and searchable by the
// daemon; anything else is refused before a mount exists.
Result<Backing> open_backing(const std::filesystem::path& path) {
  Backing backing;
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr)
    return Status::invalid_argument(fmt::format("backing directory {}: {}", path.string(), std::strerror(errno)));
  backing.canonical = resolved;
  UniqueFd probe(::open(resolved, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!probe.valid())
    return Status::invalid_argument(fmt::format("backing directory {}: {}", path.string(), std::strerror(errno)));
  if (::faccessat(probe.get(), ".", X_OK, AT_EACCESS) != 0)
    return Status::invalid_argument(fmt::format("backing directory {}: {}", path.string(), std::strerror(errno)));
  backing.fd = UniqueFd(::open(resolved, O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!backing.fd.valid() || ::fstat(backing.fd.get(), &backing.st) != 0)
    return Status::invalid_argument(fmt::format("backing directory {}: {}", path.string(), std::strerror(errno)));
  return backing;
}

// The mount point must be a directory outside the backing tree: inside it, the mount would
// appear within itself, and fusermount3 -u could not take it down again (EBUSY). Returns it
// canonical.
Result<std::filesystem::path> check_mountpoint(const std::filesystem::path& mountpoint,
                                               const std::filesystem::path& canonical_backing) {
  struct stat st {};
  if (::stat(mountpoint.c_str(), &st) != 0)
    return Status::invalid_argument(fmt::format("mount point {}: {}", mountpoint.string(), std::strerror(errno)));
  if (!S_ISDIR(st.st_mode))
    return Status::invalid_argument(fmt::format("mount point {} is not a directory", mountpoint.string()));
  char resolved[PATH_MAX];
  if (::realpath(mountpoint.c_str(), resolved) == nullptr)
    return Status::invalid_argument(fmt::format("mount point {}: {}", mountpoint.string(), std::strerror(errno)));
  if (is_within(resolved, canonical_backing)) {
    return Status::invalid_argument(fmt::format(
        "mount point {} is {}the backing directory {}: the mount would show itself and could not be unmounted; "
        "mount it outside the backing directory",
        resolved, canonical_backing == resolved ? "" : "inside ", canonical_backing.string()));
  }
  return std::filesystem::path(resolved);
}

// Raises the soft descriptor limit to the hard one and returns how many O_PATH descriptors
// the inode table may keep.
std::size_t inode_fd_budget() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) spdlog::warn("cannot raise RLIMIT_NOFILE: {}", std::strerror(errno));
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  const auto descriptors = limit.rlim_cur == RLIM_INFINITY ? std::size_t{1} << 20 : static_cast<std::size_t>(limit.rlim_cur);
  return std::max(kMinInodeFds, descriptors / kInodeFdShareDivisor);
}

// libfuse's mount options: always default_permissions (the kernel checks access against the
// backing's modes, DESIGN.md); fsname shows the backing in mount(8) unless fsname= names
// another source; subtype makes the type "fuse.flashdir" unless subtype= says otherwise.
std::string fuse_mount_options(const MountRequest& request, const std::filesystem::path& backing) {
  std::string fsname;
  for (char c : request.options.fsname.value_or(backing.string())) {
    if (c == ',' || c == '\\') fsname += '\\';
    fsname += c;
  }
  std::string text = fmt::format("default_permissions,subtype={},fsname={}",
                                 request.options.subtype.value_or("flashdir"), fsname);
  if (request.options.allow_other) text += ",allow_other";
  if (request.options.allow_root) text += ",allow_root";
  if (request.options.max_read_bytes) text += fmt::format(",max_read={}", *request.options.max_read_bytes);
  for (const auto& flag : request.options.kernel_flags) text += "," + flag;
  if (atime_mode(request.options) == AtimeMode::noatime) text += ",noatime";
  return text;
}

// strictatime, which libfuse 3.14 cannot hand to mount(2), set on the mount once it is up: the
// mount's atime flags alone change, as with a bind remount. It needs CAP_SYS_ADMIN (run_mount
// refuses it to a daemon not run as root, whose mount fusermount3 makes).
Status set_strictatime(const std::filesystem::path& mountpoint) {
  mount_attr attributes{};
  attributes.attr_set = MOUNT_ATTR_STRICTATIME;
  attributes.attr_clr = MOUNT_ATTR__ATIME;
  if (::mount_setattr(AT_FDCWD, mountpoint.c_str(), 0, &attributes, sizeof attributes) != 0)
    return Status::io_error(fmt::format("option 'strictatime': cannot set it on {}: {}", mountpoint.string(), std::strerror(errno)));
  return Status::ok();
}

// Background start: the parent waits until the child reports the mount up (or why not) on a
// pipe, so that `flashdir B M` returns only once M is usable and fails visibly. The fork comes
// before anything starts threads (RocksDB, the engine, libfuse).
class Startup {
 public:
  // Returns in the child (and in the foreground case); the parent exits from here.
  explicit Startup(bool foreground) {
    if (foreground) return;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;  // degrade to foreground behaviour
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return;
    }
    if (pid > 0) {
      ::close(fds[1]);
      char status = 1;
      const ssize_t n = ::read(fds[0], &status, 1);
      ::_exit(n == 1 && status == 0 ? 0 : 1);
    }
    ::close(fds[0]);
    report_fd_ = fds[1];
    ::setsid();
  }
  bool foreground() const { return report_fd_ < 0; }
  // Tells the waiting parent how the start went; after success the child's stdio leaves the
  // terminal (stderr goes to `log`).
  void report(bool ok, UniqueFd log = UniqueFd()) {
    if (report_fd_ < 0) return;
    if (ok) {
      const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null >= 0) {
        ::dup2(null, STDIN_FILENO);
        ::dup2(null, STDOUT_FILENO);
        ::close(null);
      }
      if (log.valid()) ::dup2(log.get(), STDERR_FILENO);
      if (::chdir("/") != 0) spdlog::warn("chdir /: {}", std::strerror(errno));
    }
    const char status = ok ? 0 : 1;
    if (::write(report_fd_, &status, 1) != 1) spdlog::warn("cannot report the start to the parent");
    ::close(report_fd_);
    report_fd_ = -1;
  }
  ~Startup() { report(false); }

 private:
  int report_fd_ = -1;
};

int refuse(const Status& status) {
  fmt::print(stderr, "flashdir: {}\n", status.message());
  return 1;
}

// The engine's options from the mount's; the sequential cutoffs a mount does not set follow the
// backing (backing_kind.h).
cache::EngineOptions engine_options(const MountOptions& options, BackingKind backing) {
  cache::EngineOptions engine;
  engine.read_sequential_cutoff_bytes = default_sequential_cutoff_bytes(backing, engine.read_sequential_cutoff_bytes);
  engine.write_sequential_cutoff_bytes = default_sequential_cutoff_bytes(backing, engine.write_sequential_cutoff_bytes);
  engine.miss_read_pages = default_miss_read_pages(backing, engine.miss_read_pages);
  engine.store_writes_behind = stores_writes_behind(backing);
  switch (options.write_mode) {
    case WriteMode::writethrough: engine.write_mode = cache::WriteMode::write_through; break;
    case WriteMode::writeback: engine.write_mode = cache::WriteMode::write_back; break;
    case WriteMode::writearound: engine.write_mode = cache::WriteMode::write_around; break;
  }
  switch (options.metadata_scheme) {
    case MetadataSchemeChoice::lufuw: engine.metadata = cache::MetadataScheme::lufuw; break;
    case MetadataSchemeChoice::write_update: engine.metadata = cache::MetadataScheme::write_update; break;
    case MetadataSchemeChoice::update_write_update: engine.metadata = cache::MetadataScheme::update_write_update; break;
  }
  engine.write_back_delay_ms = write_back_delay_ms(options);
  if (options.seq_cutoff_read_bytes) engine.read_sequential_cutoff_bytes = *options.seq_cutoff_read_bytes;
  if (options.seq_cutoff_write_bytes) engine.write_sequential_cutoff_bytes = *options.seq_cutoff_write_bytes;
  if (options.identity == IdentityChoice::inode) engine.identity = IdentityRule::inode;
  if (options.identity == IdentityChoice::path) engine.identity = IdentityRule::path;
  return engine;
}

// The FTL as the cache was formatted, with the device RAM the mount options ask for.
FtlOptions ftl_options_for(const format::Superblock& superblock, const MountOptions& options) {
  FtlOptions ftl = ftl_options(superblock);
  if (options.ram_policy) {
    const std::uint64_t budget = ftl.ram.budget_bytes;
    ftl.ram = *options.ram_policy;
    ftl.ram.budget_bytes = budget;
  }
  if (options.ram_bytes) ftl.ram.budget_bytes = *options.ram_bytes;
  return ftl;
}

// Caches formatted before mkfs knew a small chip's minimum (doc/ftl.md "Layout") still open;
// their owner learns why a full one may refuse writes, and how to mend it.
void warn_if_overprovision_below_minimum(const format::Superblock& superblock) {
  auto minimum = Ftl::minimum_overprovision_permille(superblock.geometry);
  if (!minimum.is_ok() || superblock.overprovision_permille >= *minimum) return;
  spdlog::warn("the cache keeps {}% of its chip spare, less than the {}% garbage collection needs to always make "
               "room: once full, it may refuse writes; mkfs.flashdir --force formats it anew with enough",
               superblock.overprovision_permille / 10.0, *minimum / 10.0);
}

// Opens the cache (at mount, and again when a stopped cache resumes) and logs what its restart
// found.
Result<std::unique_ptr<cache::MountedCache>> open_cache(const MountRequest& request,
                                                        const std::filesystem::path& backing_root,
                                                        const cache::EngineOptions& engine, const TakenCache& cache) {
  auto backing_store = cache::open_posix_backing_store(backing_root);
  if (!backing_store.is_ok()) return backing_store.status();
  auto mounted = cache::MountedCache::open(cache.dir.path, std::move(backing_store.value()), engine,
                                           ftl_options_for(cache.superblock, request.options),
                                           request.options.nand_latency == NandLatencyMode::emulate
                                               ? cache::ChipTiming::real_time
                                               : cache::ChipTiming::simulated,
                                           request.options.power_cut_control ? cache::ChipFaults::cut_on_request
                                                                             : cache::ChipFaults::none);
  if (!mounted.is_ok())
    return mounted.status().with_context(fmt::format("opening the cache {}", cache.dir.path.string()));
  warn_if_overprovision_below_minimum(cache.superblock);
  const auto restart = mounted.value()->engine().stats().restart;
  spdlog::info("cache opened in {:.3f} s: {} ({} usable pages, {} dropped, usable fraction {:.4f})", restart.seconds,
               restart.from_restart_image ? "clean, from the restart image"
               : restart.clean_shutdown   ? "clean"
                                          : "recovered after an unclean stop",
               restart.usable_slots,
               restart.dropped_slots + restart.orphan_slots, restart.usable_fraction);
  if (restart.dirty_slots != 0) {
    spdlog::info("write-back: {} dirty pages found, {} written back to their files", restart.dirty_slots,
                 restart.written_back_slots);
  }
  if (restart.lost_dirty_slots != 0) {
    spdlog::error("write-back: {} dirty pages could not be written back and are lost; the first: {}",
                  restart.lost_dirty_slots, restart.lost_dirty_reason);
  }
  for (const std::string& loss : restart.losses) spdlog::error("write-back: data an fsync had kept is lost: {}", loss);
  if (restart.files_with_losses > restart.losses.size())
    spdlog::error("write-back: ... and {} more files lost data", restart.files_with_losses - restart.losses.size());
  if (restart.saved_dirty_slots != 0) {
    std::string names;
    for (const std::string& name : restart.saved_files) names += (names.empty() ? "" : ", ") + name;
    spdlog::error("write-back: {} dirty pages of {} files could not be proven to belong to the file now at their "
                  "path and were saved in {}: {}",
                  restart.saved_dirty_slots, restart.saved_files.size(), (cache.dir.path / kLostFoundDirName).string(), names);
  }
  return mounted;
}

// The daemon's metadata cache (metadata_cache.h) in CACHE/names. Its answers name objects by
// device and inode number, so it runs only where those are stable (the inode identity rule: not
// over sshfs and other FUSE stores that number inodes as they meet them, where a number may
// name another file after the backing forgets it). A mount that keeps none (that rule, strict
// consistency, name_cache=0) still opens it once, to empty it: changes made through this mount
// would not remove what an earlier one stored.
std::unique_ptr<MetadataCache> open_name_cache(const MountOptions& options, const std::filesystem::path& cache_dir,
                                               const struct stat& root, IdentityRule rule, bool keep_stored) {
  const bool enabled = options.consistency != Consistency::strict && options.name_cache_entries != 0 &&
                       rule == IdentityRule::inode;
  if (!enabled && rule != IdentityRule::inode && options.name_cache_entries != 0 && options.consistency != Consistency::strict)
    spdlog::info("no metadata cache: the backing's inode numbers are not stable (identity=path)");
  MetadataCache::Options cache_options;
  cache_options.max_entries = enabled ? options.name_cache_entries : 0;
  cache_options.bound = [options](double age_seconds) { return kernel_cache_seconds(options, age_seconds); };
  auto names = std::make_unique<MetadataCache>(std::move(cache_options), cache_dir / kNameCacheDirName,
                                               ObjectId{root.st_dev, root.st_ino}, keep_stored);
  if (!enabled) return nullptr;
  const auto counts = names->counts();
  if (counts.loaded != 0) spdlog::info("metadata cache: {} names kept from before the restart", counts.loaded);
  return names;
}

struct Served {
  int exit_code = 1;
  bool mounted = false;  // the mount came up: the cache is kept whatever happens next
};

// Everything from the taken cache to the clean shutdown: the data path, the FUSE session, the
// loop. The lock's line follows: "serving MOUNTPOINT" once mounted, "closing" once the session
// has ended, so that a daemon starting meanwhile waits instead of failing.
Served serve(const MountRequest& request, Backing& backing, const std::filesystem::path& mountpoint,
             TakenCache& cache, Startup& startup) {
  Served served;
  MountContext context;
  context.options = request.options;
  context.backing_root = backing.canonical;
  context.cache_dir = cache.dir.path;
  context.owner_uid = ::geteuid();
  context.owner_gid = ::getegid();
  context.inodes = std::make_unique<InodeTable>(std::move(backing.fd), backing.st, inode_fd_budget());
  struct statvfs backing_vfs {};
  context.backing_noatime = ::fstatvfs(context.inodes->root_fd(), &backing_vfs) == 0 && (backing_vfs.f_flag & ST_NOATIME) != 0;
  struct statfs backing_fs {};
  if (::fstatfs(context.inodes->root_fd(), &backing_fs) == 0) context.backing_fs = backing_file_system(backing_fs.f_type);
  const cache::EngineOptions engine = engine_options(request.options, context.backing_fs.kind);
  context.seq_cutoff_read_bytes = engine.read_sequential_cutoff_bytes;
  context.seq_cutoff_write_bytes = engine.write_sequential_cutoff_bytes;
  context.store_writes_behind = engine.store_writes_behind;
  auto mounted = open_cache(request, backing.canonical, engine, cache);
  if (!mounted.is_ok()) return {refuse(mounted.status())};
  spdlog::info("files are told apart by {}", identity_rule_name(mounted.value()->engine().identity_rule()));
  // A restart that wrote dirty pages back changed those files after the names were stored.
  context.metadata = open_name_cache(request.options, cache.dir.path, backing.st, mounted.value()->engine().identity_rule(),
                                     mounted.value()->engine().stats().restart.dirty_slots == 0);
  if (context.metadata != nullptr) {
    context.name_opener = std::make_unique<NameOpener>(
        *context.inodes, [&context](Inode& inode) { return open_keeping_the_check(context, inode); });
    context.inodes->open_ahead_by_handle(request.options.consistency == Consistency::read_mostly);
  }
  context.inodes->on_stale_name([&context](Inode& parent, std::string_view name) {
    if (context.metadata != nullptr) context.metadata->name_changed({parent.dev(), parent.ino()}, name);
  });
  spdlog::info("backing file system {} ({}): sequential cutoff {} for reads, {} for writes (0: none); consistency {}",
               context.backing_fs.type, context.backing_fs.kind == BackingKind::remote ? "remote" : "local",
               format_size(context.seq_cutoff_read_bytes), format_size(context.seq_cutoff_write_bytes),
               consistency_name(context.options.consistency));
  CacheSupervisor::Options supervision;
  supervision.dir = cache.dir.path;
  supervision.min_free_bytes = request.options.min_free_bytes;
  supervision.reopen = [&request, &backing, engine, &cache] { return open_cache(request, backing.canonical, engine, cache); };
  context.data = std::make_unique<EngineFileData>(
      std::move(mounted.value()), std::move(supervision), request.options.write_mode == WriteMode::writeback,
      backing_reads(context.backing_fs.kind, request.options.backing_reads));
  // The log is opened before the mount so that a refusal (a link planted in the cache) still
  // reaches the terminal.
  UniqueFd log;
  if (!startup.foreground()) {
    auto opened = open_in_dir(cache.dir, kLogFileName, O_WRONLY | O_CREAT | O_APPEND);
    if (!opened.is_ok()) return {refuse(opened.status())};
    log = std::move(opened.value());
  }

  const std::string options_text = fuse_mount_options(request, backing.canonical);
  std::vector<std::string> arguments = {request.program_name, "-o", options_text};
  if (request.options.debug) arguments.emplace_back("-d");
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());

  const fuse_lowlevel_ops ops = make_operations();
  fuse_session* session = fuse_session_new(&args, &ops, sizeof ops, &context);
  fuse_opt_free_args(&args);  // libfuse copies the vector when it edits it; the session keeps nothing of it
  if (session == nullptr) return {refuse(Status::invalid_argument("libfuse refused the mount options"))};
  context.session = session;
  if (fuse_set_signal_handlers(session) != 0) {
    fuse_session_destroy(session);
    return {refuse(Status::io_error("cannot install signal handlers"))};
  }
  // The caller's umask is applied to each new object's mode (creation_mode, or the kernel where
  // FUSE_CAP_DONT_MASK is not granted); the daemon must not apply its own.
  ::umask(0);
  if (fuse_session_mount(session, mountpoint.c_str()) != 0) {
    fuse_remove_signal_handlers(session);
    fuse_session_destroy(session);
    return {refuse(Status::io_error(fmt::format("cannot mount on {}", mountpoint.string())))};
  }
  if (atime_mode(request.options) == AtimeMode::strictatime) {
    if (Status s = set_strictatime(mountpoint); !s.is_ok()) {
      fuse_session_unmount(session);
      fuse_remove_signal_handlers(session);
      fuse_session_destroy(session);
      return {refuse(s)};
    }
  }
  served.mounted = true;
  if (Status s = cache.lock.set_state(fmt::format("{} {}", kStateServing, mountpoint.string())); !s.is_ok())
    spdlog::warn("{}", s.message());
  startup.report(true, std::move(log));
  // Said once the terminal has its answer: into daemon.log in the background, on stderr in the
  // foreground. Nothing a user must act on is here (the restart's losses were said above).
  spdlog::info("mounted {} on {} (cache {}, pid {})\n{}", backing.canonical.string(), mountpoint.string(),
               cache.dir.path.string(), ::getpid(), describe(request.options));
  if (!context.inodes->reopens_by_handle())
    spdlog::info("open_by_handle_at is not available (it needs CAP_DAC_READ_SEARCH and file handles on the "
                 "backing file system): every known inode keeps a descriptor");

  fuse_loop_config* loop = fuse_loop_cfg_create();
  if (request.options.threads != 0) fuse_loop_cfg_set_max_threads(loop, request.options.threads);
  fuse_loop_cfg_set_clone_fd(loop, request.options.clone_fd ? 1 : 0);
  const int loop_result = fuse_session_loop_mt(session, loop);
  fuse_loop_cfg_destroy(loop);

  fuse_session_unmount(session);
  if (Status s = cache.lock.set_state(kStateClosing); !s.is_ok()) spdlog::warn("{}", s.message());
  fuse_remove_signal_handlers(session);
  fuse_session_destroy(session);
  // Handles the kernel never released (a stop by signal, a lazy unmount with files open) are
  // freed before the data path closes.
  const std::size_t files_left = context.files.clear();
  const std::size_t dirs_left = context.dirs.clear();
  if (files_left + dirs_left != 0)
    spdlog::info("freed {} open files and {} directory streams the kernel did not release", files_left, dirs_left);
  const Status closed = context.data->close();
  if (!closed.is_ok()) {
    spdlog::error("closing the cache: {}", closed.message());
    return served;
  }
  spdlog::info("unmounted {}; cache closed cleanly", mountpoint.string());
  // The loop reports a signal that ended it as a positive number: a requested stop, not a failure.
  served.exit_code = loop_result >= 0 ? 0 : 1;
  return served;
}

}  // namespace

int run_mount(const MountRequest& request) {
  // Checks that need no cache and start no thread come before the fork, so their messages and
  // exit code reach the caller directly.
  auto backing = open_backing(request.backing);
  if (!backing.is_ok()) return refuse(backing.status());
  auto mountpoint = check_mountpoint(request.mountpoint, backing->canonical);
  if (!mountpoint.is_ok()) return refuse(mountpoint.status());
  if (atime_mode(request.options) == AtimeMode::strictatime && ::geteuid() != 0) {
    return refuse(Status::invalid_argument("option 'strictatime' needs a daemon run as root: libfuse 3.14 cannot hand "
                                           "it to fusermount3, and only root may set it on the mount afterwards"));
  }

  Startup startup(request.options.foreground);
  log_fatal_signals();
  // Log lines go to stderr: the terminal in the foreground, CACHE/daemon.log in the background.
  // Warnings and errors go to syslog (journald) as well: a full cache disk, where daemon.log
  // lives, must not swallow the message that says so.
  auto syslog = std::make_shared<spdlog::sinks::syslog_sink_mt>("flashdir", LOG_PID, LOG_DAEMON, false);
  syslog->set_level(spdlog::level::warn);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "flashdir", spdlog::sinks_init_list{std::make_shared<spdlog::sinks::stderr_color_sink_mt>(), syslog}));
  if (request.options.debug) spdlog::set_level(spdlog::level::debug);

  // The cache's files (RocksDB's among them) are private whatever the caller's umask; serve()
  // sets the umask to 0 for the objects made through the mount.
  ::umask(077);
  auto cache = take_cache(request.options, backing->canonical);
  if (!cache.is_ok()) return refuse(cache.status());
  const Served served = serve(request, backing.value(), mountpoint.value(), cache.value(), startup);
  // A mount that never came up leaves nothing behind that it created (the data path is closed).
  if (!served.mounted) remove_created(cache->dir);
  return served.exit_code;
}

}  // namespace flashdir::fs
