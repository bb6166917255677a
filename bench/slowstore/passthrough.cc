// The file system calls of slowstore: each passes the call on to the backing directory, below
// the descriptor opened at start, after paying its latency (Store::pay). libfuse's high-level API
// keeps the inode table; `use_ino` shows the backing's inode numbers, so a file keeps its number
// across lookups and mounts, as on NFS. A kernel request costs one call here, so one round trip,
// except those the high-level API answers with several: MKDIR, MKNOD, SYMLINK, LINK and CREATE
// are followed by a getattr of the new name, SETATTR is a call per attribute changed and a
// getattr (an NFS server answers each with one reply; the benchmarks only read).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "store.h"

namespace slowstore {

namespace {

Store& store() { return *static_cast<Store*>(fuse_get_context()->private_data); }

// libfuse hands paths from the mount's root ("/a/b"); they resolve below the backing root.
std::string below_root(const char* path) { return path[1] == '\0' ? std::string(".") : std::string(path + 1); }

// The xattr calls take no directory descriptor; the root's /proc link stands in for one.
std::string proc_path(const char* path) {
  return "/proc/self/fd/" + std::to_string(store().root_fd) + "/" + below_root(path);
}

int result(long rc) { return rc < 0 ? -errno : static_cast<int>(rc); }

int fd_of(const fuse_file_info* fi) { return static_cast<int>(fi->fh); }

void* fs_init(fuse_conn_info*, fuse_config* config) {
  config->use_ino = 1;
  // An unlinked open file is removed at once instead of renamed to .fuse_hidden*: every call on
  // an open file goes through its descriptor, so it needs no name.
  config->hard_remove = 1;
  config->nullpath_ok = 1;
  return fuse_get_context()->private_data;
}

void fs_destroy(void* data) { static_cast<Store*>(data)->write_counts(); }

// `st` as the store reports it: with whole_seconds, its times cut to the second.
int reported(int rc, struct stat* st) {
  if (rc == 0 && store().whole_seconds) st->st_atim.tv_nsec = st->st_mtim.tv_nsec = st->st_ctim.tv_nsec = 0;
  return result(rc);
}

int fs_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  store().pay(Call::getattr);
  if (fi != nullptr) return reported(::fstat(fd_of(fi), st), st);
  return reported(::fstatat(store().root_fd, below_root(path).c_str(), st, AT_SYMLINK_NOFOLLOW), st);
}

int fs_readlink(const char* path, char* buffer, size_t size) {
  store().pay(Call::readlink);
  const ssize_t n = ::readlinkat(store().root_fd, below_root(path).c_str(), buffer, size - 1);
  if (n < 0) return -errno;
  buffer[n] = '\0';
  return 0;
}

int fs_mknod(const char* path, mode_t mode, dev_t rdev) {
  store().pay(Call::mknod);
  return result(::mknodat(store().root_fd, below_root(path).c_str(), mode, rdev));
}

int fs_mkdir(const char* path, mode_t mode) {
  store().pay(Call::mkdir);
  return result(::mkdirat(store().root_fd, below_root(path).c_str(), mode));
}

int fs_unlink(const char* path) {
  store().pay(Call::unlink);
  return result(::unlinkat(store().root_fd, below_root(path).c_str(), 0));
}

int fs_rmdir(const char* path) {
  store().pay(Call::rmdir);
  return result(::unlinkat(store().root_fd, below_root(path).c_str(), AT_REMOVEDIR));
}

int fs_symlink(const char* target, const char* path) {
  store().pay(Call::symlink);
  return result(::symlinkat(target, store().root_fd, below_root(path).c_str()));
}

int fs_rename(const char* from, const char* to, unsigned int flags) {
  store().pay(Call::rename);
  const int root = store().root_fd;
  return result(::renameat2(root, below_root(from).c_str(), root, below_root(to).c_str(), flags));
}

int fs_link(const char* from, const char* to) {
  store().pay(Call::link);
  const int root = store().root_fd;
  return result(::linkat(root, below_root(from).c_str(), root, below_root(to).c_str(), 0));
}

int fs_chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  store().pay(Call::chmod);
  if (fi != nullptr) return result(::fchmod(fd_of(fi), mode));
  return result(::fchmodat(store().root_fd, below_root(path).c_str(), mode, 0));
}

int fs_chown(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
  store().pay(Call::chown);
  if (fi != nullptr) return result(::fchown(fd_of(fi), uid, gid));
  return result(::fchownat(store().root_fd, below_root(path).c_str(), uid, gid, AT_SYMLINK_NOFOLLOW));
}

int fs_truncate(const char* path, off_t size, fuse_file_info* fi) {
  store().pay(Call::truncate);
  if (fi != nullptr) return result(::ftruncate(fd_of(fi), size));
  const int fd = ::openat(store().root_fd, below_root(path).c_str(), O_WRONLY | O_NOFOLLOW);
  if (fd < 0) return -errno;
  const int rc = result(::ftruncate(fd, size));
  ::close(fd);
  return rc;
}

int fs_utimens(const char* path, const struct timespec times[2], fuse_file_info* fi) {
  store().pay(Call::utimens);
  if (fi != nullptr) return result(::futimens(fd_of(fi), times));
  return result(::utimensat(store().root_fd, below_root(path).c_str(), times, AT_SYMLINK_NOFOLLOW));
}

int fs_open(const char* path, fuse_file_info* fi) {
  store().pay(Call::open);
  const int fd = ::openat(store().root_fd, below_root(path).c_str(), fi->flags & ~O_NOFOLLOW);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}

int fs_create(const char* path, mode_t mode, fuse_file_info* fi) {
  store().pay(Call::create);
  const int fd = ::openat(store().root_fd, below_root(path).c_str(), fi->flags | O_CREAT, mode);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}

// Pays after the pread, which tells how many bytes the line carries (a short read near the end).
int fs_read(const char*, char* buffer, size_t size, off_t offset, fuse_file_info* fi) {
  const ssize_t n = ::pread(fd_of(fi), buffer, size, offset);
  if (n < 0) return -errno;
  store().pay(Call::read, static_cast<size_t>(n));
  return static_cast<int>(n);
}

int fs_write(const char*, const char* buffer, size_t size, off_t offset, fuse_file_info* fi) {
  store().pay(Call::write, 0, size);
  return result(::pwrite(fd_of(fi), buffer, size, offset));
}

int fs_statfs(const char*, struct statvfs* st) {
  store().pay(Call::statfs);
  return result(::fstatvfs(store().root_fd, st));
}

// close(2) of a backing file opened through the mount has nothing to flush (the backing is
// local); the round trip is what a network store's client pays at close.
int fs_flush(const char*, fuse_file_info*) {
  store().pay(Call::flush);
  return 0;
}

int fs_release(const char*, fuse_file_info* fi) {
  store().pay(Call::release);
  ::close(fd_of(fi));
  return 0;
}

int fs_fsync(const char*, int data_only, fuse_file_info* fi) {
  store().pay(Call::fsync);
  return result(data_only != 0 ? ::fdatasync(fd_of(fi)) : ::fsync(fd_of(fi)));
}

int fs_fallocate(const char*, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  store().pay(Call::fallocate);
  return result(::fallocate(fd_of(fi), mode, offset, length));
}

int fs_setxattr(const char* path, const char* name, const char* value, size_t size, int flags) {
  store().pay(Call::setxattr);
  return result(::lsetxattr(proc_path(path).c_str(), name, value, size, flags));
}

int fs_getxattr(const char* path, const char* name, char* value, size_t size) {
  store().pay(Call::getxattr);
  return result(::lgetxattr(proc_path(path).c_str(), name, value, size));
}

int fs_listxattr(const char* path, char* list, size_t size) {
  store().pay(Call::listxattr);
  return result(::llistxattr(proc_path(path).c_str(), list, size));
}

int fs_removexattr(const char* path, const char* name) {
  store().pay(Call::removexattr);
  return result(::lremovexattr(proc_path(path).c_str(), name));
}

DIR* dir_of(const fuse_file_info* fi) { return reinterpret_cast<DIR*>(fi->fh); }

int fs_opendir(const char* path, fuse_file_info* fi) {
  store().pay(Call::opendir);
  const int fd = ::openat(store().root_fd, below_root(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -errno;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int error = errno;
    ::close(fd);
    return -error;
  }
  fi->fh = reinterpret_cast<uint64_t>(dir);
  return 0;
}

// The whole listing in one call (offsets 0): libfuse keeps it and answers the kernel's further
// READDIR requests of the same open directory from it, so a listing costs one round trip.
int fs_readdir(const char*, void* buffer, fuse_fill_dir_t fill, off_t, fuse_file_info* fi, fuse_readdir_flags) {
  store().pay(Call::readdir);
  DIR* dir = dir_of(fi);
  ::rewinddir(dir);
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    struct stat st {};
    st.st_ino = entry->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(entry->d_type));
    fill(buffer, entry->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0));
  }
  return -errno;
}

int fs_releasedir(const char*, fuse_file_info* fi) {
  store().pay(Call::releasedir);
  ::closedir(dir_of(fi));
  return 0;
}

}  // namespace

fuse_operations passthrough_operations() {
  fuse_operations ops{};
  ops.init = fs_init;
  ops.destroy = fs_destroy;
  ops.getattr = fs_getattr;
  ops.readlink = fs_readlink;
  ops.mknod = fs_mknod;
  ops.mkdir = fs_mkdir;
  ops.unlink = fs_unlink;
  ops.rmdir = fs_rmdir;
  ops.symlink = fs_symlink;
  ops.rename = fs_rename;
  ops.link = fs_link;
  ops.chmod = fs_chmod;
  ops.chown = fs_chown;
  ops.truncate = fs_truncate;
  ops.utimens = fs_utimens;
  ops.open = fs_open;
  ops.create = fs_create;
  ops.read = fs_read;
  ops.write = fs_write;
  ops.statfs = fs_statfs;
  ops.flush = fs_flush;
  ops.release = fs_release;
  ops.fsync = fs_fsync;
  ops.fallocate = fs_fallocate;
  ops.setxattr = fs_setxattr;
  ops.getxattr = fs_getxattr;
  ops.listxattr = fs_listxattr;
  ops.removexattr = fs_removexattr;
  ops.opendir = fs_opendir;
  ops.readdir = fs_readdir;
  ops.releasedir = fs_releasedir;
  return ops;
}

}  // namespace slowstore
