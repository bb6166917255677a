// What kind of file system the backing directory is on, and the defaults that follow from it.
#pragma once

#include <cstdint>
#include <string>

#include "flashdir/cache/backing_store.h"
#include "fs/mount_options.h"

namespace flashdir::fs {

// A store reached over a network or through another FUSE daemon (NFS, SMB, 9p, Ceph, AFS,
// sshfs, rclone and other object-store mounts) against a local file system (a disk, an array,
// tmpfs). Known by the file system's magic number (statfs f_type).
enum class BackingKind { local, remote };

struct BackingFileSystem {
  BackingKind kind = BackingKind::local;
  std::string type;  // "nfs", "fuse", ... or the magic number in hex
};

BackingFileSystem backing_file_system(long f_type);

// The sequential cutoff a mount uses when no seq_cutoff_read=/seq_cutoff_write= is given:
// bcache's cutoff exists because a disk array streams faster than a cache would gain it, but
// a remote store is slower than the cache for every stream, so there every stream is admitted
// (0); on a local file system the engine's default.
std::uint64_t default_sequential_cutoff_bytes(BackingKind kind, std::uint64_t engine_default);

// How the engine reads its backing files: a read longer than 128 KiB through a descriptor opened
// with O_DIRECT with backing_reads=direct (unless the store refuses it); otherwise, on a remote
// store, in parallel pieces of 128 KiB, the size of the requests Linux's FUSE client makes of a
// buffered read (one after another, a round trip each), and a miss's read of up to 1 MiB at
// once; on a local one in one read of the engine's default (doc/daemon.md "Backing round trips").
cache::BackingReads backing_reads(BackingKind kind, BackingReadsChoice choice);
std::uint32_t default_miss_read_pages(BackingKind kind, std::uint32_t engine_default);

// Whether write-through stores a large write in the cache behind it, while the next write goes
// to the backing file (cache::EngineOptions::store_writes_behind): on a remote store, whose
// writes wait on the network; on a local one both are copies on the same CPUs.
bool stores_writes_behind(BackingKind kind);

}  // namespace flashdir::fs
