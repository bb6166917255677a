#include "fs/inode_table.h"

#include <fcntl.h>

#include <cstdlib>
#include <cstring>

#include "fs/backing_stat.h"
#include "fs/descriptor_path.h"

namespace flashdir::fs {
namespace {

// MAX_HANDLE_SZ from <linux/exportfs.h>-era headers: the largest handle any file system emits.
constexpr std::size_t kMaxHandleBytes = 128;

// The handle of the object `fd` refers to, or nothing if its file system has none.
std::vector<unsigned char> handle_of(int fd) {
  std::vector<unsigned char> bytes(sizeof(struct file_handle) + kMaxHandleBytes);
  auto* handle = reinterpret_cast<struct file_handle*>(bytes.data());
  handle->handle_bytes = kMaxHandleBytes;
  int mount_id = 0;
  if (::name_to_handle_at(fd, "", handle, &mount_id, AT_EMPTY_PATH) != 0) return {};
  bytes.resize(sizeof(struct file_handle) + handle->handle_bytes);
  return bytes;
}

}  // namespace

bool can_reopen_by_handle(int mount_fd) {
  auto handle = handle_of(mount_fd);
  if (handle.empty()) return false;
  UniqueFd fd(::open_by_handle_at(mount_fd, reinterpret_cast<struct file_handle*>(handle.data()), O_PATH | O_CLOEXEC));
  return fd.valid();
}

InodeTable::InodeTable(UniqueFd root_fd, const struct stat& root_stat, std::size_t max_cached_fds)
    // open_by_handle_at wants a descriptor opened for real (not O_PATH) on the file system.
    : mount_fd_(::openat(root_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)),
      reopen_by_handle_(mount_fd_.valid() && can_reopen_by_handle(mount_fd_.get())),
      root_fd_(std::make_shared<const UniqueFd>(std::move(root_fd))),
      root_(std::make_unique<Inode>(root_stat.st_dev, root_stat.st_ino, S_IFDIR)),
      root_path_(descriptor_path(root_fd_->get()).value_or("")),
      max_cached_fds_(max_cached_fds) {
  root_->fd_ = root_fd_;
  root_->pinned_ = true;
  // The kernel never forgets the root; one lookup keeps forget() from ever dropping it.
  root_->lookups_ = 1;
}

InodeTable::~InodeTable() = default;

Inode& InodeTable::find_or_add_locked(const struct stat& st) {
  if (st.st_dev == root_->dev() && st.st_ino == root_->ino()) {
    // The backing root seen again (a bind mount or ".." cannot reach it, but a hard-linked
    // directory cannot exist either); the root's descriptor stays.
    ++root_->lookups_;
    return *root_;
  }
  auto [it, inserted] = inodes_.try_emplace(Key{st.st_dev, st.st_ino});
  if (inserted) {
    it->second = std::make_unique<Inode>(st.st_dev, st.st_ino, st.st_mode & S_IFMT);
    // The kernel's inode comes with this one, holding the attributes of the lookup that made it
    // (and no pages): the first open compares with them.
    it->second->last_open_version_ = version_of(st);
  }
  ++it->second->lookups_;
  return *it->second;
}

Inode& InodeTable::remember(UniqueFd fd, const struct stat& st) {
  std::lock_guard lock(mutex_);
  if (auto it = inodes_.find(Key{st.st_dev, st.st_ino});
      it != inodes_.end() && it->second->parent_ != nullptr && it->second->named_ctime_ns_ != Inode::ctime_ns(st))
    detach_locked(*it->second);
  Inode& inode = find_or_add_locked(st);
  if (&inode == root_.get()) return inode;
  // A live descriptor holds its object, so no other object can have its (dev, ino): it stays,
  // unless the name it came by has been removed since (a hard link, renamed over or unlinked).
  // Calls that need a name of the object (link, the engine's path) use the descriptor's, so
  // the name just looked up replaces a removed one.
  if (inode.fd_ != nullptr) {
    if (descriptor_path(inode.fd_->get())) {
      if (!inode.pinned_) lru_.splice(lru_.begin(), lru_, inode.lru_position_);
      return inode;
    }
    drop_fd_locked(inode);
  }
  if (inode.parent_ != nullptr) named_opened_locked(inode);
  inode.handle_.clear();
  install_fd_locked(inode, std::make_shared<const UniqueFd>(std::move(fd)));
  return inode;
}

std::vector<unsigned char> InodeTable::handle_to_keep(int fd, const struct stat& st) const {
  // open_by_handle_at's mount descriptor is the backing root: only its file system's objects.
  if (!reopen_by_handle_ || st.st_dev != root_->dev()) return {};
  return handle_of(fd);
}

Inode* InodeTable::remember_named(Inode& parent, std::string_view name, const struct stat& st,
                                  std::vector<unsigned char> handle) {
  std::lock_guard lock(mutex_);
  if (st.st_dev == root_->dev() && st.st_ino == root_->ino()) return nullptr;
  if (auto it = inodes_.find(Key{st.st_dev, st.st_ino}); it != inodes_.end()) {
    const Inode& known = *it->second;
    if (known.parent_ == nullptr || known.named_ctime_ns_ != Inode::ctime_ns(st)) return nullptr;
  }
  Inode& inode = find_or_add_locked(st);
  if (inode.parent_ != nullptr) return &inode;  // another name of it, known by name only too
  inode.parent_ = &parent;
  inode.name_ = std::string(name);
  inode.named_ctime_ns_ = Inode::ctime_ns(st);
  if (reopen_by_handle_ && st.st_dev == root_->dev()) inode.handle_ = std::move(handle);
  ++parent.lookups_;
  named_.insert_or_assign(NamedKey{&parent, inode.name_}, &inode);
  // Opened ahead where its name is what opens it, or where its open stands on the check made
  // ahead (name_opener.h).
  if (inode.handle_.empty() || open_ahead_by_handle_) {
    named_children_[&parent].insert(&inode);
    note_named_children_locked();
  }
  return &inode;
}

bool InodeTable::within_root(int fd) const {
  const std::optional<std::string> path = descriptor_path(fd);
  return path && !root_path_.empty() && path->size() > root_path_.size() && path->starts_with(root_path_) &&
         ((*path)[root_path_.size()] == '/' || root_path_ == "/");
}

Inode* InodeTable::remember_opened(const struct stat& st) {
  std::lock_guard lock(mutex_);
  auto it = inodes_.find(Key{st.st_dev, st.st_ino});
  if (it == inodes_.end()) return nullptr;
  Inode& inode = *it->second;
  if (inode.parent_ != nullptr || inode.fd_ == nullptr || inode.file_type_ != (st.st_mode & S_IFMT)) return nullptr;
  if (!descriptor_path(inode.fd_->get())) return nullptr;  // the name it came by is gone
  if (!inode.pinned_) lru_.splice(lru_.begin(), lru_, inode.lru_position_);
  ++inode.lookups_;
  return &inode;
}

std::vector<Inode*> InodeTable::take_named_siblings(Inode& inode, std::size_t max) {
  std::vector<Inode*> taken;
  // Every open asks: the mutex only while some directory has them (after a restart).
  if (!has_named_children_.load(std::memory_order_relaxed)) return taken;
  std::lock_guard lock(mutex_);
  if (inode.parent_ == nullptr) return taken;
  auto children = named_children_.find(inode.parent_);
  if (children == named_children_.end()) return taken;
  children->second.erase(&inode);
  for (auto it = children->second.begin(); it != children->second.end() && taken.size() < max;) {
    Inode* sibling = *it;
    ++sibling->lookups_;
    taken.push_back(sibling);
    children->second.erase(it++);
  }
  if (children->second.empty()) named_children_.erase(children);
  note_named_children_locked();
  return taken;
}

void InodeTable::note_named_children_locked() {
  has_named_children_.store(!named_children_.empty(), std::memory_order_relaxed);
}

void InodeTable::detach_locked(Inode& inode) {
  auto it = inodes_.find(Key{inode.dev(), inode.ino()});
  detached_.emplace(&inode, std::move(it->second));
  inodes_.erase(it);
}

void InodeTable::open_named(Inode& parent, std::string_view name) {
  Inode* inode = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = named_.find(NamedKey{&parent, std::string(name)});
    if (it == named_.end()) return;
    inode = it->second;
    // Held across the open, so that a forget meanwhile cannot free it.
    ++inode->lookups_;
  }
  // A failure leaves it as it was: the name is about to go, and its later uses fail with ESTALE.
  [[maybe_unused]] auto opened = path_fd(*inode);
  forget(*inode, 1);
}

void InodeTable::named_opened_locked(Inode& inode) {
  // The name may be another inode's by now (this one was detached, another answered the name).
  if (auto it = named_.find(NamedKey{inode.parent_, inode.name_}); it != named_.end() && it->second == &inode)
    named_.erase(it);
  Inode* parent = inode.parent_;
  if (auto children = named_children_.find(parent); children != named_children_.end()) {
    children->second.erase(&inode);
    if (children->second.empty()) named_children_.erase(children);
    note_named_children_locked();
  }
  inode.parent_ = nullptr;
  inode.name_.clear();
  forget_locked(*parent, 1);
}

void InodeTable::add_lookup(Inode& inode) {
  std::lock_guard lock(mutex_);
  ++inode.lookups_;
}

void InodeTable::forget(Inode& inode, std::uint64_t count) {
  std::lock_guard lock(mutex_);
  forget_locked(inode, count);
}

void InodeTable::forget_locked(Inode& inode, std::uint64_t count) {
  if (&inode == root_.get()) return;
  // The kernel never forgets more than it looked up; a bug here would free a live inode.
  if (count > inode.lookups_) std::abort();
  inode.lookups_ -= count;
  if (inode.lookups_ != 0) return;
  if (inode.fd_ != nullptr) drop_fd_locked(inode);
  // Gives back its parent's lookup, which may free the parent in turn (a chain as deep as the
  // path, so the recursion is bounded by PATH_MAX).
  if (inode.parent_ != nullptr) named_opened_locked(inode);
  if (detached_.erase(&inode) == 0) inodes_.erase(Key{inode.dev(), inode.ino()});
}

SysResult<SharedFd> InodeTable::path_fd(Inode& inode, std::optional<struct statx>* opened_stat) {
  std::vector<unsigned char> handle;
  {
    std::lock_guard lock(mutex_);
    if (inode.fd_ != nullptr) {
      if (!inode.pinned_) lru_.splice(lru_.begin(), lru_, inode.lru_position_);
      return inode.fd_;
    }
    if (inode.parent_ == nullptr) handle = inode.handle_;
  }
  if (handle.empty()) return open_by_name(inode, opened_stat);
  // The reopen runs unlocked; two threads may both reopen, and the second result wins.
  auto* file_handle = reinterpret_cast<struct file_handle*>(handle.data());
  UniqueFd fd(::open_by_handle_at(mount_fd_.get(), file_handle, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno == ENOENT ? Errno{ESTALE} : last_errno();
  auto shared = std::make_shared<const UniqueFd>(std::move(fd));
  std::lock_guard lock(mutex_);
  ++reopens_;
  if (inode.fd_ != nullptr) drop_fd_locked(inode);
  install_fd_locked(inode, shared);
  return shared;
}

SysResult<SharedFd> InodeTable::open_by_name(Inode& inode, std::optional<struct statx>* opened_stat) {
  Inode* parent = nullptr;
  std::string name;
  std::int64_t named_ctime_ns = 0;
  std::vector<unsigned char> handle;
  {
    std::lock_guard lock(mutex_);
    if (inode.fd_ != nullptr) return inode.fd_;
    // Neither a descriptor, nor a handle, nor a name: only the root is never evicted.
    if (inode.parent_ == nullptr) return Errno{ESTALE};
    parent = inode.parent_;
    name = inode.name_;
    named_ctime_ns = inode.named_ctime_ns_;
    handle = inode.handle_;
    // Held across the open: another thread opening the inode meanwhile gives back its own.
    ++parent->lookups_;
  }
  const auto done = [&](SysResult<SharedFd> result) {
    forget(*parent, 1);
    return result;
  };
  // By the handle, the object itself: no component of its path is asked of the backing, and the
  // parent stays known by name only. A handle that no longer opens (the object is gone, or the
  // backing forgot the handle: a FUSE store without export support keeps only the inodes its
  // kernel still caches) leaves the name.
  UniqueFd fd;
  if (!handle.empty())
    fd = UniqueFd(::open_by_handle_at(mount_fd_.get(), reinterpret_cast<struct file_handle*>(handle.data()),
                                      O_PATH | O_NOFOLLOW | O_CLOEXEC));
  // Paths of it must work (the engine keys a file by its path below the root): a handle the
  // kernel can only open as a disconnected object, or one that names an object moved out of
  // the backing tree, leaves the name too.
  if (fd.valid() && !within_root(fd.get())) fd = UniqueFd();
  const bool by_handle = fd.valid();
  if (!by_handle) {
    auto parent_fd = path_fd(*parent);
    if (!parent_fd.is_ok()) return done(Errno{parent_fd.error()});
    fd = UniqueFd(::openat((*parent_fd)->get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  }
  int error = fd.valid() ? 0 : errno;
  // Checked against what the backing says now, past any attribute cache of its own.
  auto checked = fd.valid() ? statx_of(fd.get(), STATX_BASIC_STATS | STATX_BTIME, AT_STATX_FORCE_SYNC)
                            : SysResult<struct statx>(Errno{error});
  if (checked.is_ok()) {
    const struct stat st = stat_from_statx(*checked);
    if (st.st_dev != inode.dev() || st.st_ino != inode.ino() ||
        static_cast<mode_t>(st.st_mode & S_IFMT) != inode.file_type() || Inode::ctime_ns(st) != named_ctime_ns)
      error = ESTALE;
  } else {
    error = checked.error();
  }
  if (error != 0) {
    // Removed or replaced behind the mount since the answer that named it.
    if (error == ENOENT || error == ENOTDIR) error = ESTALE;
    if (stale_name_) stale_name_(*parent, name);
    return done(Errno{error});
  }
  if (opened_stat != nullptr) *opened_stat = *checked;
  auto shared = std::make_shared<const UniqueFd>(std::move(fd));
  bool detached = false;
  {
    std::lock_guard lock(mutex_);
    if (inode.fd_ != nullptr) {
      shared = inode.fd_;
    } else if (detached_.contains(&inode)) {
      detached = true;  // meanwhile: another object has its number in the table
    } else {
      if (inode.parent_ != nullptr) named_opened_locked(inode);
      inode.handle_.clear();
      install_fd_locked(inode, shared);
      if (by_handle) ++named_opened_by_handle_;
    }
  }
  if (detached) return done(Errno{ESTALE});
  return done(std::move(shared));
}

bool Inode::same_attributes(const struct stat& a, const struct stat& b) {
  const auto same_time = [](const timespec& x, const timespec& y) { return x.tv_sec == y.tv_sec && x.tv_nsec == y.tv_nsec; };
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_mode == b.st_mode && a.st_nlink == b.st_nlink &&
         a.st_uid == b.st_uid && a.st_gid == b.st_gid && a.st_rdev == b.st_rdev && a.st_size == b.st_size &&
         a.st_blocks == b.st_blocks && same_time(a.st_atim, b.st_atim) && same_time(a.st_mtim, b.st_mtim) &&
         same_time(a.st_ctim, b.st_ctim);
}

InodeTable::Counts InodeTable::counts() const {
  std::lock_guard lock(mutex_);
  return Counts{inodes_.size() + detached_.size() + 1, lru_.size() + pinned_, pinned_, reopens_, evictions_, named_.size(),
                named_opened_by_handle_};
}

void InodeTable::install_fd_locked(Inode& inode, SharedFd fd) {
  inode.fd_ = std::move(fd);
  if (inode.pinned_) {
    ++pinned_;
    return;
  }
  lru_.push_front(&inode);
  inode.lru_position_ = lru_.begin();
  evict_locked();
}

void InodeTable::drop_fd_locked(Inode& inode) {
  if (inode.pinned_) {
    --pinned_;
  } else {
    lru_.erase(inode.lru_position_);
  }
  inode.fd_.reset();
}

void InodeTable::evict_locked() {
  while (lru_.size() + pinned_ > max_cached_fds_ && !lru_.empty()) {
    Inode& victim = *lru_.back();
    lru_.pop_back();
    // open_by_handle_at's mount descriptor is the backing root: only its file system's inodes
    // can come back that way.
    if (reopen_by_handle_ && victim.dev() == root_->dev()) victim.handle_ = handle_of(victim.fd_->get());
    if (victim.handle_.empty()) {
      // No handle to come back with: this inode keeps its descriptor for good.
      victim.pinned_ = true;
      ++pinned_;
      continue;
    }
    victim.fd_.reset();
    ++evictions_;
  }
}

}  // namespace flashdir::fs
