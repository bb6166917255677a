// What the kernel says an open descriptor is called, through /proc/self/fd.
#pragma once

#include <optional>
#include <string>

#include "flashdir/file_io.h"

namespace flashdir::fs {

// The absolute path the kernel names `fd`'s object by now: the name it was opened by, moved by
// renames since. Nullopt if that name has been removed (the object may live on under another
// name, a hard link) or cannot be read. A name that itself ends in " (deleted)" reads as
// removed: the kernel marks removed names that way, and nothing tells the two apart.
std::optional<std::string> descriptor_path(int fd);

}  // namespace flashdir::fs
