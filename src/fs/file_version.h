// What tells the daemon that a backing file is as it was when the kernel last cached its pages,
// and whether a read would move its access time (doc/daemon.md "Consistency").
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <cstdint>

#include "fs/mount_options.h"

namespace flashdir::fs {

// A backing file's version as its attributes show it: the same rule the cache engine uses to
// tell a file changed behind the mount (doc/daemon.md "File identity"). A rewrite that keeps
// the size and lands within the backing file system's timestamp granularity is invisible to
// it, as it is to NFS.
struct FileVersion {
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
  timespec ctime{};
  bool operator==(const FileVersion& other) const;
};

FileVersion version_of(const struct stat& st);

// The daemon's last read of a backing object's data (a file's first read of an open, a
// directory's listing): made while the object was at `version`, at `read_ns` or later.
struct ReadMark {
  FileVersion version;
  std::int64_t read_ns = 0;  // CLOCK_REALTIME; 0: no read
};

// True if a read of the file would move its access time under `mode`: always with strictatime,
// never with noatime, and with relatime (Linux's rule) while the access time is not later than
// the modification or change time, or is a day old. Under relatime `mark` settles what the
// attributes may not show: a read of the version `st` shows, made after its modification and
// change times and less than a day ago, left the access time later than both. A store that
// reports whole seconds (sshfs) shows an access time in the second of the modification as
// equal to it, and one that caches attributes shows the access time of before the read.
bool read_moves_atime(const struct stat& st, AtimeMode mode, const timespec& now, const ReadMark& mark = {});

}  // namespace flashdir::fs
