#include "fs/inode_table.h"

#include <fcntl.h>

#include <cstdlib>
#include <cstring>

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
      max_cached_fds_(max_cached_fds) {
  root_->fd_ = root_fd_;
  root_->pinned_ = true;
  // The kernel never forgets the root; one lookup keeps forget() from ever dropping it.
  root_->lookups_ = 1;
}

InodeTable::~InodeTable() = default;

Inode& InodeTable::remember(UniqueFd fd, const struct stat& st) {
  std::lock_guard lock(mutex_);
  if (st.st_dev == root_->dev() && st.st_ino == root_->ino()) {
    // The backing root seen again (a bind mount or ".." cannot reach it, but a hard-linked
    // directory cannot exist either); the root's descriptor stays.
    ++root_->lookups_;
    return *root_;
  }
  auto [it, inserted] = inodes_.try_emplace(Key{st.st_dev, st.st_ino});
  if (inserted) it->second = std::make_unique<Inode>(st.st_dev, st.st_ino, st.st_mode & S_IFMT);
  Inode& inode = *it->second;
  ++inode.lookups_;
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
  inode.handle_.clear();
  install_fd_locked(inode, std::make_shared<const UniqueFd>(std::move(fd)));
  return inode;
}

void InodeTable::add_lookup(Inode& inode) {
  std::lock_guard lock(mutex_);
  ++inode.lookups_;
}

void InodeTable::forget(Inode& inode, std::uint64_t count) {
  std::lock_guard lock(mutex_);
  if (&inode == root_.get()) return;
  // The kernel never forgets more than it looked up; a bug here would free a live inode.
  if (count > inode.lookups_) std::abort();
  inode.lookups_ -= count;
  if (inode.lookups_ != 0) return;
  if (inode.fd_ != nullptr) drop_fd_locked(inode);
  inodes_.erase(Key{inode.dev(), inode.ino()});
}

SysResult<SharedFd> InodeTable::path_fd(Inode& inode) {
  std::vector<unsigned char> handle;
  {
    std::lock_guard lock(mutex_);
    if (inode.fd_ != nullptr) {
      if (!inode.pinned_) lru_.splice(lru_.begin(), lru_, inode.lru_position_);
      return inode.fd_;
    }
    handle = inode.handle_;
  }
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

InodeTable::Counts InodeTable::counts() const {
  std::lock_guard lock(mutex_);
  return Counts{inodes_.size() + 1, lru_.size() + pinned_, pinned_, reopens_, evictions_};
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
