// Internal to src/check: the catalog (doc/format.md "Catalog"; doc/fsck.md "What -y rebuilds").
//   - It opens, its records read, and its copy of the superblock has this cache's uuid: it is
//     this cache's. A copy that is missing, damaged or differs in another field is rewritten
//     from the superblock by -y (the superblock and the image header agree on it).
//   - Missing, refused by RocksDB, records that do not read, or a copy naming another cache:
//     nothing in it can name the files of this cache's pages. RocksDB's repair could bring back
//     records deleted since, which nothing tells from current ones, and another cache's
//     records name another cache's files. -y replaces it (replace_catalog) once the cache check
//     has dropped the clean pages and saved the dirty ones in lost+found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check_state.h"
#include "flashdir/cache_dir.h"
#include "flashdir/check.h"

namespace flashdir {

// Sets state.catalog_unusable; under -n reports it as an error.
void check_catalog(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report, CheckState& state);

// What fsck says of an unusable catalog (`why`) and of what -y does about it.
std::string unusable_catalog_error(const CacheDirPaths& paths, const std::string& why);

// -y: keeps the unusable catalog as CACHE/lost+found/catalog-<time> (beside a .txt saying why,
// for RocksDB's tools or the cache it came from) and creates an empty one bound to
// `superblock` (its copy), whose next file id is `next_file_id`. Appends what it did to `done`.
Status replace_catalog(const CacheDirPaths& paths, const format::Superblock& superblock, const std::string& why,
                       std::uint64_t next_file_id, std::vector<std::string>& done);

// The name prefix of a catalog replace_catalog kept in lost+found.
inline constexpr const char* kReplacedCatalogPrefix = "catalog-";

}  // namespace flashdir
