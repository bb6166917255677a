// The daemon's answer to a GETATTR from what an open or a getattr just got from the backing.
//
// The kernel keeps a file's attributes for the consistency model's bound, but drops its copy of
// the access time whenever it reads pages from the daemon (fuse_invalidate_atime): the fstat
// that follows a first read (tar stats each file it has read, to see whether it changed) is a
// GETATTR, and without this a backing round trip, although the open stat'ed the file a moment
// before and the cache's reads leave the access time alone (O_NOATIME). So the daemon keeps the
// attributes the backing gave, for as long as the kernel could have kept them itself: the
// model's bound for the object's age, counted from when the backing was asked.
//
// Under readmostly an open's stat is also what later opens within the bound stand on
// (kept_open_answer).
//
// Regular files only, and never kept while a writer has the file open, write-back data of it waits, or an open of it
// bypasses the cache (its reads move the access time). Forgotten at every change of the object
// through the mount (note_attributes_changed), at a read that moves its access time, and at
// every change of names (an unlink or a rename changes the link count and change time of an
// object whose inode the operation never meets): the namespace epoch. A change that overtakes
// the backing's answer voids it (the stamp, read before the backing is asked).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>

#include "fs/mount_context.h"

namespace flashdir::fs {

struct AttributeStamp {
  std::uint64_t changes = 0;          // Inode::attribute_changes()
  std::uint64_t namespace_epoch = 0;  // MountContext::namespace_changes
  std::int64_t asked_ns = 0;          // CLOCK_REALTIME
  bool keepable = false;              // attributes_may_be_kept, before the backing was asked
};

// Taken right before the backing is asked for `inode`'s attributes.
AttributeStamp stamp_attributes(const MountContext& context, Inode& inode);
// Keeps `st`, the backing's answer, unless a change overtook it or it may not be kept; what was
// kept before goes then, unless `st` says the same. `opened`: the statx an open made, of which
// `st` is the view.
void keep_attributes(const MountContext& context, Inode& inode, const struct stat& st, const AttributeStamp& stamp,
                     const struct statx* opened = nullptr);

struct KeptAnswer {
  struct stat st;
  double seconds_left;  // how long the kernel may keep it in turn
};
// The attributes kept for `inode`, if they still hold.
std::optional<KeptAnswer> kept_answer(const MountContext& context, Inode& inode);

// Opens `inode`, known by name only, as its first use would, and keeps the stat its check made
// (an open under readmostly stands on it); false if it could not (NameOpener's open).
bool open_keeping_the_check(const MountContext& context, Inode& inode);

// Under readmostly, the statx an earlier open of `inode` kept, if it still holds: an open within
// the model's bound asks the backing nothing, as NFS's nocto mounts and rclone's directory cache
// do, and a file's data changed behind the mount is seen within the bound (doc/daemon.md
// "Consistency"). Under cto and strict an open always stats the file (close-to-open).
std::optional<struct statx> kept_open_answer(const MountContext& context, Inode& inode);

}  // namespace flashdir::fs
