#include "fs/file_version.h"

namespace flashdir::fs {
namespace {

bool same_time(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }
bool not_later(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec <= b.tv_nsec;
}

constexpr time_t kRelatimeSeconds = 24 * 60 * 60;

}  // namespace

bool FileVersion::operator==(const FileVersion& other) const {
  return ino == other.ino && size == other.size && same_time(mtime, other.mtime) && same_time(ctime, other.ctime);
}

FileVersion version_of(const struct stat& st) { return {st.st_ino, st.st_size, st.st_mtim, st.st_ctim}; }

bool read_moves_atime(const struct stat& st, AtimeMode mode, const timespec& now) {
  switch (mode) {
    case AtimeMode::noatime:
      return false;
    case AtimeMode::strictatime:
      return true;
    case AtimeMode::relatime:
      return not_later(st.st_atim, st.st_mtim) || not_later(st.st_atim, st.st_ctim) ||
             now.tv_sec - st.st_atim.tv_sec >= kRelatimeSeconds;
  }
  return true;
}

}  // namespace flashdir::fs
