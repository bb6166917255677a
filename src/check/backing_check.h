// Internal to src/check: the catalog's files against the backing directory (doc/fsck.md "The
// backing directory"). A catalog file whose path below it holds no regular file is gone; a
// file with dirty pages whose path now holds another file (another owner or, under the inode
// rule, another inode) is an error nothing in the cache can fix: the engine's next open writes
// its pages back if its file is there again, and otherwise keeps them in lost+found.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>

#include "flashdir/catalog.h"
#include "flashdir/check.h"
#include "slot_sort.h"

namespace flashdir {

// `dirty`: file id -> dirty slots of catalog files.
void check_backing_files(const std::filesystem::path& root, IdentityRule rule, const CatalogFiles& files,
                         const std::map<std::uint64_t, std::uint64_t>& dirty, const CheckOptions& options,
                         CheckReport& report);

}  // namespace flashdir
