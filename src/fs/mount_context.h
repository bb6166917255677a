// The state one mount's FUSE operations share (libfuse's session userdata), and the helpers
// every operation uses: inode numbers, errors, timeouts. Includes libfuse.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "fs/backing_kind.h"
#include "fs/credentials.h"
#include "fs/descriptor_path.h"
#include "fs/dir_handle.h"
#include "fs/file_data.h"
#include "fs/fuse_api.h"
#include "fs/inode_table.h"
#include "fs/metadata_cache.h"
#include "fs/mount_options.h"
#include "fs/name_opener.h"
#include "fs/open_handles.h"
#include "fs/stats_baseline.h"
#include "fs/stats_report.h"

namespace flashdir::fs {

// Inode numbers the daemon hands the kernel: the root, the hidden control directory and its
// files, and otherwise the address of an Inode (never this small).
inline constexpr fuse_ino_t kControlDirIno = 2;
inline constexpr fuse_ino_t kStatsFileIno = 3;
inline constexpr fuse_ino_t kStatsJsonFileIno = 4;
inline constexpr fuse_ino_t kResetFileIno = 5;
inline constexpr fuse_ino_t kPowerCutFileIno = 6;  // with power_cut_control only
inline constexpr const char* kControlDirName = ".flashdir";

struct MountContext {
  MountOptions options;
  std::filesystem::path backing_root;  // canonical
  std::filesystem::path cache_dir;
  std::unique_ptr<InodeTable> inodes;
  std::unique_ptr<MetadataCache> metadata;  // null under strict consistency (nothing may be cached)
  std::unique_ptr<NameOpener> name_opener;  // with the metadata cache; declared after `inodes`
  std::unique_ptr<FileData> data;
  OpCounters counters;
  StatsBaseline counters_baseline;  // what `.flashdir/reset` zeroed
  OpenHandles<OpenFile> files;  // declared after `data`: destroyed before it
  OpenHandles<DirHandle> dirs;
  // The stats files' snapshots, one per open (a RELEASE the kernel had not sent when the mount
  // went away is freed with the context).
  OpenHandles<std::string> stats_snapshots;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  BackingFileSystem backing_fs;
  std::uint64_t seq_cutoff_read_bytes = 0;   // as the engine runs them (backing_kind.h)
  std::uint64_t seq_cutoff_write_bytes = 0;
  bool store_writes_behind = false;  // write-through's pages stored behind the write (backing_kind.h)
  bool backing_noatime = false;  // the backing file system moves no access times (mounted noatime)
  fuse_session* session = nullptr;  // set once the session exists (kernel cache notifications)
  // Changes of names made through the mount (note_name_changed), for kept_attributes.h.
  std::atomic<std::uint64_t> namespace_changes{0};
  uid_t owner_uid = 0;  // the daemon's ids, owners of the control files
  gid_t owner_gid = 0;
};

MountContext& context_of(fuse_req_t req);
// How long the kernel may keep the name and attributes of an object with attributes `st`, and
// a missing name (the consistency model, doc/daemon.md "Consistency").
double kernel_cache_seconds(const MountContext& context, const struct stat& st);
// The same bound for attributes the backing gave at `asked_ns` (CLOCK_REALTIME).
double kernel_cache_seconds(const MountContext& context, const struct stat& st, std::int64_t asked_ns);
double negative_entry_seconds(const MountContext& context);
Inode& inode_of(MountContext& context, fuse_ino_t ino);
fuse_ino_t ino_of(MountContext& context, Inode& inode);
bool is_control_ino(fuse_ino_t ino);

// The metadata cache's side of changes made through the mount (metadata_cache.h, and
// kept_attributes.h), each called once the change is made and before its reply: `name` in
// `parent` was made, removed or replaced (the directory's own attributes change with it); the
// attributes of `inode` changed.
void note_name_changed(MountContext& context, Inode& parent, std::string_view name);
void note_attributes_changed(MountContext& context, Inode& inode);
// The backing gave `st` of `inode` in a stat begun at `asked_ns` (CLOCK_REALTIME): a directory's
// version is kept for the lookups of names in it and for its opens (Inode::DirectoryCheck), for
// as long as the consistency model lets the answer stand (never under strict).
void note_backing_stat(MountContext& context, Inode& inode, const struct stat& st, std::int64_t asked_ns);
// Whether what the backing says of `inode` now may be kept: not while a writer has it open or
// write-back data of it waits (the backing file's attributes then lag the file's), nor while an
// open of it bypasses the cache (each of its reads may move the access time).
bool attributes_may_be_kept(Inode& inode);
std::int64_t realtime_ns();

// The caller's uid, gid and supplementary groups (the groups only when the daemon can switch
// to them: reading them costs a /proc read per request).
Caller caller_of(fuse_req_t req);

// True once the backing root has been removed (or cannot be examined any more).
bool backing_gone(const MountContext& context);

// Replies `error` (an errno), turned into EIO when the backing directory itself has gone (it
// was removed, or the file system under it was unmounted): callers then see an I/O error, not
// a misleading "no such file".
void reply_error(fuse_req_t req, int error);

// The path of an open descriptor below the backing root ("" for the root), as the kernel
// names it now; "" also if the object has no name left.
std::string relative_path_of(const MountContext& context, int fd);

// The mode to create an object with in the directory `parent_fd` (O_PATH) for a caller with
// `umask`, as the backing file system would apply that umask itself: not at all in a directory
// with a default POSIX ACL (the ACL masks the mode instead, and the backing file system applies
// it), else masked. The kernel passes modes unmasked (FUSE_CAP_DONT_MASK) and the daemon's own
// umask is 0.
mode_t creation_mode(int parent_fd, mode_t mode, mode_t umask);

// The sections of the stats file (also used by the control-file operations), counters since
// the last reset.
std::vector<StatsSection> collect_stats(MountContext& context);
// Zeroes the cumulative counters as collect_stats shows them (stats_baseline.h).
void reset_counters(MountContext& context);

}  // namespace flashdir::fs
