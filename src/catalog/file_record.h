// How the catalog lays out its keys and values (doc/format.md, "catalog"):
//   meta/catalog_format   u32 LE: Catalog::kFormat
//   meta/superblock       the superblock, encoded as in the superblock file
//   meta/options          the engine's options, JSON text
//   meta/next_file_id     u64 LE: the id the next recorded file gets (only grows)
//   meta/backing_root     the backing root record below
//   meta/identity_rule    u8: 1 inode, 2 path
//   file/<id u64 BE>      the file record below (big-endian ids sort numerically)
//   path/<relative path>  u64 LE file id: the record whose file is at that path
//   inode/<device u64 BE><inode u64 BE>   u64 LE file id: the record of that inode
//   unwritten/<id u64 BE> empty: the file has fsync'd write-back data not yet back (Catalog::mark_unwritten)
// File record: u8 version (2), u64 device, u64 inode, i64 birth_ns, u32 uid, u32 gid,
// u64 size, i64 mtime_ns, i64 ctime_ns, u32 path length, path bytes; all little-endian.
// Backing root record: u8 version (1), u64 fs_type, u64 fs_id, u64 root inode, i64 root
// birth_ns, u32 path length, path bytes, u64 XXH3-64 of everything before it.
// RocksDB checksums its blocks; these decoders still refuse a record of the wrong shape as
// corruption rather than trusting it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flashdir/catalog.h"
#include "flashdir/status.h"

namespace flashdir::catalog {

std::string file_key(std::uint64_t file_id);
std::string file_key_prefix();
Result<std::uint64_t> file_id_of_key(std::string_view key);
std::string path_key(std::string_view relative_path);
std::string inode_key(std::uint64_t device, std::uint64_t inode);
std::string unwritten_key(std::uint64_t file_id);
std::string unwritten_key_prefix();
Result<std::uint64_t> file_id_of_unwritten_key(std::string_view key);

std::string encode_u64(std::uint64_t value);
std::string encode_file_id(std::uint64_t file_id);
Result<std::uint64_t> decode_file_id(std::string_view bytes);

std::string encode_file_record(const CatalogFile& file);
Result<CatalogFile> decode_file_record(std::uint64_t file_id, std::string_view bytes);

std::string encode_backing_root(const BackingRootRecord& record);
Result<BackingRootRecord> decode_backing_root(std::string_view bytes);

// Paths are relative to the backing root: not empty, no leading or trailing '/', no "." or ".."
// component, no NUL.
Status check_relative_path(std::string_view relative_path);

}  // namespace flashdir::catalog
