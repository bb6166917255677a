// How the catalog lays out its keys and values (doc/cache.md, "catalog"):
//   meta/superblock       the superblock, encoded as in the superblock file
//   meta/options          the engine's options, JSON text
//   meta/next_file_id     u64 LE: the id the next recorded file gets
//   file/<id u64 BE>      the file record below (big-endian ids sort numerically)
//   path/<relative path>  u64 LE file id
// File record: u8 version (1), u64 dev, u64 inode, u64 size, i64 mtime_ns, i64 ctime_ns,
// u32 path length, path bytes; all little-endian. RocksDB checksums its blocks; these decoders
// still refuse a record of the wrong shape as corruption rather than trusting it.
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

std::string encode_file_id(std::uint64_t file_id);
Result<std::uint64_t> decode_file_id(std::string_view bytes);

std::string encode_file_record(const CatalogFile& file);
Result<CatalogFile> decode_file_record(std::uint64_t file_id, std::string_view bytes);

// Paths are relative to the backing root: not empty, no leading or trailing '/', no "." or ".."
// component, no NUL.
Status check_relative_path(std::string_view relative_path);

}  // namespace flashdir::catalog
