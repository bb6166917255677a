#include "fs/mount_context.h"

#include <sys/xattr.h>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "flashdir/size.h"

namespace flashdir::fs {

MountContext& context_of(fuse_req_t req) { return *static_cast<MountContext*>(fuse_req_userdata(req)); }

double kernel_cache_seconds(const MountContext& context, const struct stat& st, std::int64_t asked_ns) {
  const timespec& changed = st.st_ctim.tv_sec > st.st_mtim.tv_sec ? st.st_ctim : st.st_mtim;
  const std::int64_t changed_ns = static_cast<std::int64_t>(changed.tv_sec) * 1'000'000'000 + changed.tv_nsec;
  return kernel_cache_seconds(context.options, std::max(0.0, 1e-9 * static_cast<double>(asked_ns - changed_ns)));
}

double kernel_cache_seconds(const MountContext& context, const struct stat& st) {
  return kernel_cache_seconds(context, st, realtime_ns());
}

double negative_entry_seconds(const MountContext& context) { return kernel_cache_seconds(context.options); }

Inode& inode_of(MountContext& context, fuse_ino_t ino) {
  if (ino == FUSE_ROOT_ID) return context.inodes->root();
  return *reinterpret_cast<Inode*>(ino);
}

fuse_ino_t ino_of(MountContext& context, Inode& inode) {
  if (&inode == &context.inodes->root()) return FUSE_ROOT_ID;
  return reinterpret_cast<fuse_ino_t>(&inode);
}

void note_name_changed(MountContext& context, Inode& parent, std::string_view name) {
  context.namespace_changes.fetch_add(1, std::memory_order_acq_rel);
  parent.attributes_changed();
  if (context.metadata == nullptr) return;
  context.metadata->name_changed({parent.dev(), parent.ino()}, name);
  context.metadata->object_changed({parent.dev(), parent.ino()});
}

void note_attributes_changed(MountContext& context, Inode& inode) {
  inode.attributes_changed();
  if (context.metadata != nullptr) context.metadata->object_changed({inode.dev(), inode.ino()});
}

void note_backing_stat(MountContext& context, Inode& inode, const struct stat& st, std::int64_t asked_ns) {
  if (context.options.consistency == Consistency::strict || !S_ISDIR(st.st_mode)) return;
  const double seconds = kernel_cache_seconds(context, st, asked_ns);
  inode.note_directory_check(
      {DirectoryVersion::of(st), asked_ns, asked_ns + static_cast<std::int64_t>(seconds * 1e9), st});
}

bool attributes_may_be_kept(Inode& inode) {
  if (inode.deferred_write_ns() != 0) return false;
  bool kept = true;
  inode.for_each_open_file([&](OpenFile& file) { kept = kept && !file.opened_for_writing() && !file.bypasses_cache(); });
  return kept;
}

std::int64_t realtime_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

bool is_control_ino(fuse_ino_t ino) {
  return ino == kControlDirIno || ino == kStatsFileIno || ino == kStatsJsonFileIno || ino == kResetFileIno ||
         ino == kPowerCutFileIno;
}

Caller caller_of(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  Caller caller{ctx->uid, ctx->gid, {}};
  if (!CallerCredentials::switching_enabled()) return caller;
  caller.groups = supplementary_groups_of(ctx->pid);
  return caller;
}

bool backing_gone(const MountContext& context) {
  struct stat st {};
  return ::fstat(context.inodes->root_fd(), &st) != 0 || st.st_nlink == 0;
}

void reply_error(fuse_req_t req, int error) {
  MountContext& context = context_of(req);
  context.counters.count_error();
  if ((error == ENOENT || error == ESTALE || error == ENOTCONN) && backing_gone(context)) error = EIO;
  fuse_reply_err(req, error);
}

mode_t creation_mode(int parent_fd, mode_t mode, mode_t umask) {
  const bool default_acl = ::getxattr(proc_path(parent_fd).c_str(), "system.posix_acl_default", nullptr, 0) > 0;
  return default_acl ? mode : mode & ~umask;
}

std::string relative_path_of(const MountContext& context, int fd) {
  const std::optional<std::string> named = descriptor_path(fd);
  if (!named) return {};
  const std::string& path = *named;
  const std::string root = context.backing_root.string();
  if (path == root) return {};
  if (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/')
    return path.substr(root.size() + 1);
  return {};
}

namespace {

// The counters as kept, since the mount.
std::vector<StatsSection> raw_stats(MountContext& context) {
  std::vector<StatsSection> sections;
  const auto uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - context.started).count();
  StatsSection mount{"mount", {}};
  mount.rows.emplace_back("backing", context.backing_root.string());
  mount.rows.emplace_back("cache", context.cache_dir.string());
  mount.rows.emplace_back("mode", std::string(write_mode_name(context.options.write_mode)));
  mount.rows.emplace_back("uptime_seconds", uptime);
  mount.rows.emplace_back("backing_type", context.backing_fs.type);
  mount.rows.emplace_back("backing_remote", context.backing_fs.kind == BackingKind::remote);
  mount.rows.emplace_back("consistency", std::string(consistency_name(context.options.consistency)));
  mount.rows.emplace_back("kernel_cache_min_seconds", kernel_cache_seconds(context.options));
  mount.rows.emplace_back("kernel_cache_max_seconds", kernel_cache_seconds(context.options, 10 * kMaxCacheSeconds));
  mount.rows.emplace_back("seq_cutoff_read_bytes", context.seq_cutoff_read_bytes);
  mount.rows.emplace_back("seq_cutoff_write_bytes", context.seq_cutoff_write_bytes);
  mount.rows.emplace_back("store_writes_behind", context.store_writes_behind);
  sections.push_back(std::move(mount));
  for (auto& section : context.counters.sections()) sections.push_back(std::move(section));
  const auto counts = context.inodes->counts();
  StatsSection inodes{"inodes", {}};
  inodes.rows.emplace_back("known", static_cast<std::uint64_t>(counts.inodes));
  inodes.rows.emplace_back("open_path_fds", static_cast<std::uint64_t>(counts.cached_fds));
  inodes.rows.emplace_back("max_path_fds", static_cast<std::uint64_t>(context.inodes->max_cached_fds()));
  inodes.rows.emplace_back("pinned_path_fds", static_cast<std::uint64_t>(counts.pinned_fds));
  inodes.rows.emplace_back("fd_evictions", counts.evictions);
  inodes.rows.emplace_back("reopens_by_handle", counts.reopens);
  inodes.rows.emplace_back("known_by_name_only", static_cast<std::uint64_t>(counts.named_only));
  inodes.rows.emplace_back("named_opened_by_handle", counts.named_opened_by_handle);
  sections.push_back(std::move(inodes));
  if (context.metadata != nullptr) {
    const auto names = context.metadata->counts();
    StatsSection metadata{"name_cache", {}};
    metadata.rows.emplace_back("entries", names.entries);
    metadata.rows.emplace_back("max_entries", static_cast<std::uint64_t>(context.options.name_cache_entries));
    metadata.rows.emplace_back("loaded_at_start", names.loaded);
    metadata.rows.emplace_back("hits", names.hits);
    metadata.rows.emplace_back("misses", names.misses);
    metadata.rows.emplace_back("names_vouched", names.names_vouched);
    metadata.rows.emplace_back("invalidations", names.invalidations);
    metadata.rows.emplace_back("evictions", names.evictions);
    metadata.rows.emplace_back("voided_answers", names.voided_records);
    metadata.rows.emplace_back("damaged_records", names.damaged_records);
    metadata.rows.emplace_back("store_errors", names.store_errors);
    metadata.rows.emplace_back("listings", names.listings);
    metadata.rows.emplace_back("listed_names", names.listed_names);
    metadata.rows.emplace_back("listings_loaded_at_start", names.listings_loaded);
    metadata.rows.emplace_back("listings_recorded", names.listings_recorded);
    metadata.rows.emplace_back("listing_hits", names.listing_hits);
    metadata.rows.emplace_back("listing_misses", names.listing_misses);
    if (context.name_opener != nullptr) {
      const auto opener = context.name_opener->counts();
      metadata.rows.emplace_back("siblings_queued", opener.queued);
      metadata.rows.emplace_back("siblings_opened_ahead", opener.opened);
      metadata.rows.emplace_back("siblings_failed", opener.failed);
    }
    sections.push_back(std::move(metadata));
  }
  for (auto& section : context.data->stats()) sections.push_back(std::move(section));
  return sections;
}

}  // namespace

std::vector<StatsSection> collect_stats(MountContext& context) {
  std::vector<StatsSection> sections = raw_stats(context);
  context.counters_baseline.apply(sections);
  return sections;
}

void reset_counters(MountContext& context) { context.counters_baseline.reset(raw_stats(context)); }

}  // namespace flashdir::fs
