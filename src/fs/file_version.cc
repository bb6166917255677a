#include "fs/file_version.h"

namespace flashdir::fs {
namespace {

bool same_time(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }
bool not_later(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec <= b.tv_nsec;
}

constexpr time_t kRelatimeSeconds = 24 * 60 * 60;

std::int64_t nanoseconds(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// The mark's read left the access time later than st's modification and change times, less
// than a day ago.
bool marked_read_holds(const struct stat& st, const timespec& now, const ReadMark& mark) {
  return mark.read_ns != 0 && mark.version == version_of(st) && mark.read_ns > nanoseconds(st.st_mtim) &&
         mark.read_ns > nanoseconds(st.st_ctim) && nanoseconds(now) - mark.read_ns < kRelatimeSeconds * 1'000'000'000;
}

}  // namespace

bool FileVersion::operator==(const FileVersion& other) const {
  return ino == other.ino && size == other.size && same_time(mtime, other.mtime) && same_time(ctime, other.ctime);
}

FileVersion version_of(const struct stat& st) { return {st.st_ino, st.st_size, st.st_mtim, st.st_ctim}; }

bool read_moves_atime(const struct stat& st, AtimeMode mode, const timespec& now, const ReadMark& mark) {
  switch (mode) {
    case AtimeMode::noatime:
      return false;
    case AtimeMode::strictatime:
      return true;
    case AtimeMode::relatime:
      if (marked_read_holds(st, now, mark)) return false;
      return not_later(st.st_atim, st.st_mtim) || not_later(st.st_atim, st.st_ctim) ||
             now.tv_sec - st.st_atim.tv_sec >= kRelatimeSeconds;
  }
  return true;
}

}  // namespace flashdir::fs
