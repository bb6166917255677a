// One opendir(3) of a backing directory as the daemon serves it: read from the backing, or from
// a listing the metadata cache kept for the directory's version (directory_listing.h).
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "flashdir/file_io.h"
#include "fs/directory_listing.h"
#include "fs/metadata_cache.h"

namespace flashdir::fs {

struct DirHandle {
  // Exactly one of the two: a listing kept (offsets are entry indices) or a stream of the
  // backing directory (offsets are its d_off values). The stream of an open whose listing the
  // kernel keeps is opened at the first READDIR, if one comes: until then `unopened` holds the
  // directory.
  std::shared_ptr<const DirectoryListing> listing;
  DIR* stream = nullptr;
  std::shared_ptr<const UniqueFd> unopened;
  off_t offset = 0;  // where `stream` stands, in the d_off values handed to the kernel
  // A stream read whole from its start, in order, records what it lists for the metadata cache:
  // the directory and its version at the opendir's stat, the cache's stamp() before it, and the
  // entries sent so far.
  struct Recording {
    ObjectId dir;
    DirectoryVersion version;
    std::uint64_t stamp = 0;
    std::vector<ListedEntry> entries;
  };
  std::optional<Recording> recording;
  std::mutex mutex;  // the kernel may read one handle from two threads
  DirHandle() = default;
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  ~DirHandle() {
    if (stream != nullptr) ::closedir(stream);
  }
};

}  // namespace flashdir::fs
