#include "fs/descriptor_path.h"

#include <unistd.h>

#include <climits>

namespace flashdir::fs {

std::optional<std::string> descriptor_path(int fd) {
  char target[PATH_MAX];
  const ssize_t n = ::readlink(proc_path(fd).c_str(), target, sizeof target);
  if (n <= 0 || static_cast<std::size_t>(n) == sizeof target) return std::nullopt;
  std::string path(target, static_cast<std::size_t>(n));
  if (path.ends_with(" (deleted)")) return std::nullopt;
  return path;
}

}  // namespace flashdir::fs
