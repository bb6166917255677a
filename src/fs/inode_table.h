// The daemon's inodes: one per backing (dev, ino) the kernel knows, with the kernel's lookup
// count, and a bounded set of O_PATH descriptors for them.
//
// Bounded descriptors (doc/daemon.md): passthrough_hp holds one O_PATH fd per known inode, and
// a metadata-heavy workload then runs into RLIMIT_NOFILE (EMFILE). Here at most
// `max_cached_fds` inodes keep a descriptor, in LRU order; an evicted inode keeps a file handle
// (name_to_handle_at) and is reopened with open_by_handle_at when next used. That needs
// CAP_DAC_READ_SEARCH and a backing file system that exports handles; where either is missing
// the inode keeps its descriptor ("pinned"), as passthrough_hp would.
//
// Thread safety: every member function may be called from any worker thread. One mutex guards
// the map, the lookup counts and the LRU; it is never held across a call back into the caller.
// A descriptor handed out stays open until the last user drops it, even if evicted meanwhile.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "flashdir/file_io.h"
#include "fs/directory_listing.h"
#include "fs/file_version.h"
#include "fs/sys_result.h"

namespace flashdir::fs {

using SharedFd = std::shared_ptr<const UniqueFd>;
class OpenFile;

class Inode {
 public:
  Inode(dev_t dev, ino_t ino, mode_t file_type) : dev_(dev), ino_(ino), file_type_(file_type) {}
  dev_t dev() const { return dev_; }
  ino_t ino() const { return ino_; }
  mode_t file_type() const { return file_type_; }  // S_IFMT bits; a (dev, ino) keeps its type

  // security.capability known absent while the backing ctime stays what it was when the
  // backing said so: answers the GETXATTR the kernel sends before every write without a
  // backing call. Every lookup and getattr reports the ctime it saw.
  bool capability_known_absent() const { return no_capability_.load(std::memory_order_relaxed); }
  void capability_absent_at(const struct stat& st) {
    capability_ctime_ns_.store(ctime_ns(st), std::memory_order_relaxed);
    no_capability_.store(true, std::memory_order_relaxed);
  }
  void capability_may_exist() { no_capability_.store(false, std::memory_order_relaxed); }
  // Makes each read, write, truncate and fallocate of the file's data atomic against the
  // others, as POSIX asks and the backing file system does not promise (Linux lets a pread see
  // half of a concurrent pwrite): reads share it, changes hold it alone.
  std::shared_mutex& data_lock() { return data_lock_; }
  // Held by an open from the stat that chooses its data path (the engine, or straight to the
  // backing file) until the inode knows the open, and by link(2) while it gives the file a
  // second name: two opens choosing at once, or an open and a link, would each miss the other
  // and leave one open serving cached pages the other's direct writes made stale
  // (doc/daemon.md "One data path per inode"). Taken before data_lock.
  std::mutex& data_path_choice() { return data_path_choice_; }

  void note_attributes(const struct stat& st) {
    if (capability_known_absent() && capability_ctime_ns_.load(std::memory_order_relaxed) != ctime_ns(st))
      capability_may_exist();
  }

  // The files open on this inode through the mount, from open to release: the attributes of a
  // file whose data path runs ahead of the backing file (write-back) come partly from them.
  void add_open_file(OpenFile* file) {
    std::lock_guard lock(open_files_mutex_);
    open_files_.push_back(file);
  }
  void remove_open_file(OpenFile* file) {
    std::lock_guard lock(open_files_mutex_);
    std::erase(open_files_, file);
  }
  // Calls use(OpenFile&) with one of the open files (they share the data path's state of the
  // file), under the list's lock so that it is not released meanwhile; false if none is open.
  template <typename Use>
  bool with_open_file(Use&& use) {
    std::lock_guard lock(open_files_mutex_);
    if (open_files_.empty()) return false;
    use(*open_files_.front());
    return true;
  }

  // Calls use(OpenFile&) with each open file, under the list's lock.
  template <typename Use>
  void for_each_open_file(Use&& use) {
    std::lock_guard lock(open_files_mutex_);
    for (OpenFile* file : open_files_) use(*file);
  }

  // Close-to-open for the kernel's page cache: true if `current` is the version the file had at
  // its previous open through the mount, so that the pages the kernel holds from then are
  // still the file's (writes through the mount change them there as well as in the file), or
  // before the first open, in the lookup that made the inode: the kernel then holds its
  // attributes, and no pages. Records `current` for the next open.
  bool unchanged_since_last_open(const FileVersion& current) {
    std::lock_guard lock(open_files_mutex_);
    const bool unchanged = last_open_version_ == current;
    last_open_version_ = current;
    return unchanged;
  }

  // The version the previous open (or, before any, the lookup) recorded.
  FileVersion last_open_version() const {
    std::lock_guard lock(open_files_mutex_);
    return last_open_version_;
  }
  // The daemon's last read of the backing object's data, for the access time (file_version.h).
  ReadMark read_mark() const {
    std::lock_guard lock(open_files_mutex_);
    return read_mark_;
  }
  void note_read(const ReadMark& mark) {
    std::lock_guard lock(open_files_mutex_);
    read_mark_ = mark;
  }

  // What the backing said of the object at an open or a getattr, kept to answer the kernel's
  // next GETATTR without a backing call while the consistency model allows
  // (kept_attributes.h). Forgotten by attributes_changed(); attribute_changes() counts those,
  // so that an answer a change overtook is not kept.
  struct KeptAttributes {
    struct stat st;
    std::int64_t asked_ns;           // CLOCK_REALTIME, when the backing was asked
    std::int64_t until_ns;           // CLOCK_REALTIME
    std::uint64_t namespace_epoch;   // MountContext::namespace_changes when the backing was asked
    // The whole statx (birth time included) when an open, or a check made ahead of one, asked:
    // what a later open within the bound stands on under readmostly (kept_open_answer).
    std::optional<struct statx> opened;
  };
  std::uint64_t attribute_changes() const { return attribute_changes_.load(std::memory_order_acquire); }
  void attributes_changed() {
    std::lock_guard lock(open_files_mutex_);
    attribute_changes_.fetch_add(1, std::memory_order_acq_rel);
    kept_.reset();
  }
  // Keeps `kept` unless a change came since attribute_changes() returned `changes_seen`, or
  // what is kept was asked later.
  void keep_attributes(const KeptAttributes& kept, std::uint64_t changes_seen) {
    std::lock_guard lock(open_files_mutex_);
    if (attribute_changes_.load(std::memory_order_acquire) != changes_seen) return;
    if (kept_ != nullptr && kept_->asked_ns > kept.asked_ns) return;
    kept_ = std::make_unique<KeptAttributes>(kept);
  }
  // The backing just said `st` of the object: what is kept goes unless it says the same.
  void drop_kept_unless(const struct stat& st) {
    std::lock_guard lock(open_files_mutex_);
    if (kept_ == nullptr || same_attributes(kept_->st, st)) return;
    attribute_changes_.fetch_add(1, std::memory_order_acq_rel);
    kept_.reset();
  }
  std::optional<KeptAttributes> kept_attributes() const {
    std::lock_guard lock(open_files_mutex_);
    if (kept_ == nullptr) return std::nullopt;
    return *kept_;
  }

  // Of a directory: its version as the backing last gave it (a lookup, getattr or opendir), at
  // `checked_ns`, and until when the consistency model lets that answer stand for the directory
  // as it is now. A name looked up in it while it had a settled version still names the same
  // object as long as it keeps that version (look_up, operations_entries.cc). A change through
  // the mount leaves it: a version seen before a lookup can only make that lookup's answer look
  // older than it is.
  struct DirectoryCheck {
    DirectoryVersion version;
    std::int64_t checked_ns = 0;  // CLOCK_REALTIME, no later than the stat
    std::int64_t until_ns = 0;    // CLOCK_REALTIME
    struct stat st {};            // the stat itself
  };
  // Keeps `check` unless a later one is kept.
  void note_directory_check(const DirectoryCheck& check) {
    std::lock_guard lock(open_files_mutex_);
    if (!directory_check_ || directory_check_->checked_ns <= check.checked_ns) directory_check_ = check;
  }
  std::optional<DirectoryCheck> directory_check() const {
    std::lock_guard lock(open_files_mutex_);
    return directory_check_;
  }

  // The time (CLOCK_REALTIME, ns) of the last write through the mount whose bytes the backing
  // file may not hold yet (0: none). A backing file's mtime moves only when its write-back
  // happens; until then getattr reports this one.
  std::int64_t deferred_write_ns() const { return deferred_write_ns_.load(std::memory_order_relaxed); }
  void note_deferred_write(std::int64_t now_ns) { deferred_write_ns_.store(now_ns, std::memory_order_relaxed); }
  // After a write-back: forgets the time read before it unless a later write replaced it.
  void deferred_write_written_back(std::int64_t seen_ns) {
    deferred_write_ns_.compare_exchange_strong(seen_ns, 0, std::memory_order_relaxed);
  }

 private:
  friend class InodeTable;
  static std::int64_t ctime_ns(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  }
  static bool same_attributes(const struct stat& a, const struct stat& b);
  std::shared_mutex data_lock_;
  std::mutex data_path_choice_;
  mutable std::mutex open_files_mutex_;
  std::vector<OpenFile*> open_files_;  // guarded by open_files_mutex_
  FileVersion last_open_version_;      // guarded by open_files_mutex_; at first the lookup's
  ReadMark read_mark_;                 // guarded by open_files_mutex_
  std::unique_ptr<KeptAttributes> kept_;  // guarded by open_files_mutex_
  std::optional<DirectoryCheck> directory_check_;  // guarded by open_files_mutex_
  std::atomic<std::uint64_t> attribute_changes_{0};
  std::atomic<std::int64_t> deferred_write_ns_{0};
  std::atomic<bool> no_capability_{false};
  std::atomic<std::int64_t> capability_ctime_ns_{0};
  const dev_t dev_;
  const ino_t ino_;
  const mode_t file_type_;
  std::uint64_t lookups_ = 0;           // guarded by the table's mutex
  SharedFd fd_;                         // guarded; null while evicted
  // guarded; struct file_handle bytes once evicted, or the answer's while known by name only
  std::vector<unsigned char> handle_;
  bool pinned_ = false;                 // guarded; cannot be reopened by handle
  std::list<Inode*>::iterator lru_position_;  // guarded; valid while fd_ is set and !pinned_
  // Known by name only (InodeTable::remember_named) until first used: opened then as `name_`
  // in `parent_`, which this inode holds a lookup of meanwhile.
  Inode* parent_ = nullptr;  // guarded
  std::string name_;         // guarded
  std::int64_t named_ctime_ns_ = 0;  // guarded: the change time the answer gave; it must still have it
};

// True if open_by_handle_at works for this process on the file system of `mount_fd`.
bool can_reopen_by_handle(int mount_fd);

class InodeTable {
 public:
  // `root_fd` is an O_PATH descriptor of the backing root (it is never evicted).
  InodeTable(UniqueFd root_fd, const struct stat& root_stat, std::size_t max_cached_fds);
  ~InodeTable();

  Inode& root() { return *root_; }
  int root_fd() const { return root_fd_->get(); }

  // Records one more kernel lookup of the object `fd` (O_PATH, from openat of its name)
  // refers to; `st` is its fstat. Returns the inode, created on first sight. `fd` becomes the
  // inode's descriptor unless it has one whose name is still there.
  Inode& remember(UniqueFd fd, const struct stat& st);
  // One more kernel lookup of `name` in `parent`, answered without the backing (the metadata
  // cache, metadata_cache.h) as the object `st` describes. The inode gets no descriptor until
  // one is needed: path_fd then opens `name` in `parent` and checks that it is still that object,
  // unchanged since the answer (its device, number, type and change time; ESTALE if not). Null
  // if the table knows the object otherwise (opened, or by name with another change time): the
  // answer may be about an object removed since whose number another one has now, and the
  // caller asks the backing instead.
  // `handle`, the object's file handle the answer kept (handle_to_keep), is tried first: it
  // opens the object without walking its path (on a network store, one round trip fewer per
  // component), and the same check follows.
  Inode* remember_named(Inode& parent, std::string_view name, const struct stat& st,
                        std::vector<unsigned char> handle = {});
  // The file handle by which the object `fd` refers to (`st`) can be opened again, kept with an
  // answer of the metadata cache; empty where this table cannot reopen by handle.
  std::vector<unsigned char> handle_to_keep(int fd, const struct stat& st) const;
  // One more kernel lookup of the object `st` describes if the table holds a descriptor of it
  // whose name is still there (so it is that object, and paths of it still work); null
  // otherwise (unknown, known by name only, evicted, or of another type).
  Inode* remember_opened(const struct stat& st);
  // Opens now the inode known by name only as `name` in `parent`, if there is one: done before
  // that name is removed or renamed through the mount, which would leave it nothing to be
  // opened by.
  void open_named(Inode& parent, std::string_view name);
  // Whether inodes known by name only that have a handle are opened ahead too: where an open
  // stands on the stat their check made ahead (readmostly; name_opener.h). Set before the first
  // lookup.
  void open_ahead_by_handle(bool yes) { open_ahead_by_handle_ = yes; }
  // Up to `max` other inodes known by name only, and with no handle (unless open_ahead_by_handle),
  // in the directory `inode` is known by name in (none if it is not so known), each with one more
  // lookup (the caller forgets it), and each handed out once (name_opener.h).
  std::vector<Inode*> take_named_siblings(Inode& inode, std::size_t max);
  // Called with the parent and name of an inode known by name only that turned out to be
  // another object, or none, when it was opened.
  void on_stale_name(std::function<void(Inode& parent, std::string_view name)> stale) { stale_name_ = std::move(stale); }
  // One more lookup of an inode the caller already holds (link(2) returns an existing inode).
  void add_lookup(Inode& inode);
  // The kernel forgets `count` lookups; the inode goes when none remain.
  void forget(Inode& inode, std::uint64_t count);
  // An O_PATH descriptor of `inode`; reopened by handle after an eviction. ESTALE if the
  // object is gone. An inode known by name only is opened now: `opened_stat`, if given, then
  // gets the statx (basic fields and birth time, past any attribute cache of the backing's own)
  // that checked it, so that the caller need not stat it again.
  SysResult<SharedFd> path_fd(Inode& inode, std::optional<struct statx>* opened_stat = nullptr);

  struct Counts {
    std::size_t inodes = 0;
    std::size_t cached_fds = 0;
    std::size_t pinned_fds = 0;
    std::uint64_t reopens = 0;
    std::uint64_t evictions = 0;
    std::size_t named_only = 0;  // known by name only, not opened yet
    std::uint64_t named_opened_by_handle = 0;  // of those opened since, by their answer's handle
  };
  Counts counts() const;
  std::size_t max_cached_fds() const { return max_cached_fds_; }
  // False if this process cannot reopen by handle (no CAP_DAC_READ_SEARCH, or a backing file
  // system without handles): every inode then keeps its descriptor.
  bool reopens_by_handle() const { return reopen_by_handle_; }

 private:
  struct Key {
    dev_t dev;
    ino_t ino;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.dev, k.ino);
    }
  };
  struct NamedKey {
    Inode* parent;
    std::string name;
    bool operator==(const NamedKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const NamedKey& k) {
      return H::combine(std::move(h), k.parent, k.name);
    }
  };
  Inode& find_or_add_locked(const struct stat& st);
  // An inode known by name only whose number another object turns out to have (its answer was
  // stale): it leaves the map and serves the kernel ESTALE until forgotten.
  void detach_locked(Inode& inode);
  void forget_locked(Inode& inode, std::uint64_t count);
  // Opens an inode known by name only, by the handle its answer kept if that still opens it, or
  // else by its name; ESTALE if that is no longer the object the answer described.
  SysResult<SharedFd> open_by_name(Inode& inode, std::optional<struct statx>* opened_stat);
  // The inode is no longer known by name only: its parent's lookup is given back.
  void named_opened_locked(Inode& inode);
  // Whether the kernel names `fd`'s object by a path below the backing root.
  bool within_root(int fd) const;
  // After named_children_ changed: has_named_children_ follows it.
  void note_named_children_locked();
  void install_fd_locked(Inode& inode, SharedFd fd);
  void evict_locked();
  void drop_fd_locked(Inode& inode);

  const UniqueFd mount_fd_;
  const bool reopen_by_handle_;
  bool open_ahead_by_handle_ = false;
  mutable std::mutex mutex_;
  SharedFd root_fd_;
  std::unique_ptr<Inode> root_;
  const std::string root_path_;  // the backing root's path, as the kernel names it
  absl::flat_hash_map<Key, std::unique_ptr<Inode>> inodes_;
  std::list<Inode*> lru_;  // front: most recently used
  absl::flat_hash_map<NamedKey, Inode*> named_;  // inodes known by name only
  // The inodes known by name only, and with no handle, in each directory that take_named_siblings
  // has not handed out.
  absl::flat_hash_map<Inode*, absl::flat_hash_set<Inode*>> named_children_;
  // Whether named_children_ holds any, read without the mutex (a hint: a sibling added as it is
  // read is only not opened ahead).
  std::atomic<bool> has_named_children_{false};
  absl::flat_hash_map<Inode*, std::unique_ptr<Inode>> detached_;
  std::function<void(Inode& parent, std::string_view name)> stale_name_;
  const std::size_t max_cached_fds_;
  std::size_t pinned_ = 0;
  std::uint64_t reopens_ = 0;
  std::uint64_t evictions_ = 0;
  std::uint64_t named_opened_by_handle_ = 0;
};

}  // namespace flashdir::fs
