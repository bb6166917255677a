// A FUSE passthrough that numbers inodes as sshfs and object-store mounts do: it uses libfuse's
// high-level API without `use_ino`, so st_ino is libfuse's node id, given in lookup order and
// given again from scratch at every mount (and after the kernel forgets a node). The FUSE tests
// put flashdir over it to check that a cache over such a backing keeps its files across a
// remount and never confuses two of them (tests/fuse/identity_test.py).
//
//   renumbering-passthrough BACKING MOUNTPOINT [-f] [-o allow_other]
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace {

int root_fd = -1;

// libfuse hands paths from the mount's root ("/a/b"); they resolve below the backing root.
std::string below_root(const char* path) { return path[1] == '\0' ? std::string(".") : std::string(path + 1); }

int result(int rc) { return rc < 0 ? -errno : rc; }

int fs_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  if (fi != nullptr) return result(::fstat(static_cast<int>(fi->fh), st));
  return result(::fstatat(root_fd, below_root(path).c_str(), st, AT_SYMLINK_NOFOLLOW));
}

int fs_readlink(const char* path, char* buffer, size_t size) {
  const ssize_t n = ::readlinkat(root_fd, below_root(path).c_str(), buffer, size - 1);
  if (n < 0) return -errno;
  buffer[n] = '\0';
  return 0;
}

int fs_readdir(const char* path, void* buffer, fuse_fill_dir_t fill, off_t, fuse_file_info*, fuse_readdir_flags) {
  const int fd = ::openat(root_fd, below_root(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -errno;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return -errno;
  }
  while (dirent* entry = ::readdir(dir)) fill(buffer, entry->d_name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  ::closedir(dir);
  return 0;
}

int fs_mkdir(const char* path, mode_t mode) { return result(::mkdirat(root_fd, below_root(path).c_str(), mode)); }
int fs_unlink(const char* path) { return result(::unlinkat(root_fd, below_root(path).c_str(), 0)); }
int fs_rmdir(const char* path) { return result(::unlinkat(root_fd, below_root(path).c_str(), AT_REMOVEDIR)); }
int fs_symlink(const char* target, const char* path) {
  return result(::symlinkat(target, root_fd, below_root(path).c_str()));
}
int fs_rename(const char* from, const char* to, unsigned int flags) {
  return result(::renameat2(root_fd, below_root(from).c_str(), root_fd, below_root(to).c_str(), flags));
}
int fs_chmod(const char* path, mode_t mode, fuse_file_info*) {
  return result(::fchmodat(root_fd, below_root(path).c_str(), mode, 0));
}
int fs_chown(const char* path, uid_t uid, gid_t gid, fuse_file_info*) {
  return result(::fchownat(root_fd, below_root(path).c_str(), uid, gid, AT_SYMLINK_NOFOLLOW));
}
int fs_truncate(const char* path, off_t size, fuse_file_info* fi) {
  if (fi != nullptr) return result(::ftruncate(static_cast<int>(fi->fh), size));
  const int fd = ::openat(root_fd, below_root(path).c_str(), O_WRONLY);
  if (fd < 0) return -errno;
  const int rc = result(::ftruncate(fd, size));
  ::close(fd);
  return rc;
}
int fs_utimens(const char* path, const timespec times[2], fuse_file_info* fi) {
  if (fi != nullptr) return result(::futimens(static_cast<int>(fi->fh), times));
  return result(::utimensat(root_fd, below_root(path).c_str(), times, AT_SYMLINK_NOFOLLOW));
}
int fs_open(const char* path, fuse_file_info* fi) {
  const int fd = ::openat(root_fd, below_root(path).c_str(), fi->flags & ~O_NOFOLLOW);
  if (fd < 0) return -errno;
  fi->fh = static_cast<std::uint64_t>(fd);
  return 0;
}
int fs_create(const char* path, mode_t mode, fuse_file_info* fi) {
  const int fd = ::openat(root_fd, below_root(path).c_str(), fi->flags | O_CREAT, mode);
  if (fd < 0) return -errno;
  fi->fh = static_cast<std::uint64_t>(fd);
  return 0;
}
int fs_read(const char*, char* buffer, size_t size, off_t offset, fuse_file_info* fi) {
  return result(static_cast<int>(::pread(static_cast<int>(fi->fh), buffer, size, offset)));
}
int fs_write(const char*, const char* buffer, size_t size, off_t offset, fuse_file_info* fi) {
  return result(static_cast<int>(::pwrite(static_cast<int>(fi->fh), buffer, size, offset)));
}
int fs_statfs(const char* path, struct statvfs* st) {
  const int fd = ::openat(root_fd, below_root(path).c_str(), O_PATH);
  if (fd < 0) return -errno;
  const int rc = result(::fstatvfs(fd, st));
  ::close(fd);
  return rc;
}
int fs_release(const char*, fuse_file_info* fi) { return result(::close(static_cast<int>(fi->fh))); }
int fs_fsync(const char*, int data_only, fuse_file_info* fi) {
  const int fd = static_cast<int>(fi->fh);
  return result(data_only != 0 ? ::fdatasync(fd) : ::fsync(fd));
}

void* fs_init(fuse_conn_info*, fuse_config* config) {
  config->use_ino = 0;  // the point of this file system: numbers are libfuse's own, in lookup order
  // No attribute caching in the kernel (as sshfs -o cache=no): a change made below is seen at
  // once, so the tests can tell what flashdir sees from what its backing shows it.
  config->kernel_cache = 0;
  config->attr_timeout = 0;
  config->entry_timeout = 0;
  config->negative_timeout = 0;
  return nullptr;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BACKING MOUNTPOINT [FUSE options]\n", argv[0]);
    return 2;
  }
  root_fd = ::open(argv[1], O_PATH | O_DIRECTORY);
  if (root_fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  fuse_operations ops{};
  ops.getattr = fs_getattr;
  ops.readlink = fs_readlink;
  ops.readdir = fs_readdir;
  ops.mkdir = fs_mkdir;
  ops.unlink = fs_unlink;
  ops.rmdir = fs_rmdir;
  ops.symlink = fs_symlink;
  ops.rename = fs_rename;
  ops.chmod = fs_chmod;
  ops.chown = fs_chown;
  ops.truncate = fs_truncate;
  ops.utimens = fs_utimens;
  ops.open = fs_open;
  ops.create = fs_create;
  ops.read = fs_read;
  ops.write = fs_write;
  ops.statfs = fs_statfs;
  ops.release = fs_release;
  ops.fsync = fs_fsync;
  ops.init = fs_init;
  std::vector<char*> args{argv[0]};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  return fuse_main(static_cast<int>(args.size()), args.data(), &ops, nullptr);
}
