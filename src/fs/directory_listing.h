// A directory's entries as the backing listed them, and the version of the directory they
// belong to (doc/daemon.md "Metadata cache"). The metadata cache keeps listings so that an
// opendir whose stat finds the directory unchanged lists it without reading it from the backing
// again, also after a restart.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashdir/types.h"

namespace flashdir::fs {

// What a change of a directory's entries moves: its modification and change times (and, on
// most file systems, its size). A listing is served only while the directory still has the
// version it was read at.
struct DirectoryVersion {
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::int64_t size = 0;
  bool operator==(const DirectoryVersion&) const = default;
  static DirectoryVersion of(const struct stat& st);
};

struct ListedEntry {
  std::string name;
  std::uint64_t ino = 0;
  unsigned char type = 0;  // a dirent d_type
  bool operator==(const ListedEntry&) const = default;
};

struct DirectoryListing {
  DirectoryVersion version;
  std::vector<ListedEntry> entries;  // without "." and ".."
};

// Whether a directory's `version`, as a stat at `stat_ns` (CLOCK_REALTIME) saw it, may stand
// for what is read of the directory after the stat: a listing read then, or which object a name
// in it was found to name. A file system stamps times at a granularity (a jiffy on ext4, a
// second on some stores): a change made in the same tick as the last one, after the stat, would
// leave the version as it was. So a version stands only if the directory had last changed at
// least kRacyChangeSeconds before the stat (git's "racy" rule for its index): any later change
// then moves the times.
inline constexpr double kRacyChangeSeconds = 2.0;
bool version_is_settled(const DirectoryVersion& version, std::int64_t stat_ns);

// The checksum a metadata-cache store record ends in: of its key and the bytes before it, so
// that a record moved under another key fails it too.
std::uint64_t record_checksum(std::string_view key, ConstByteSpan body);
// A timespec in nanoseconds.
std::int64_t ns_of(const timespec& t);

// A store record of `listing` under store key `key`, ending in a checksum of both.
std::string encode_listing(std::string_view key, const DirectoryListing& listing);
// The listing a record holds; nullopt if it is damaged (checksum, lengths, trailing bytes).
std::optional<DirectoryListing> decode_listing(std::string_view key, std::string_view value);

}  // namespace flashdir::fs
