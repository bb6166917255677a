// The catalog: a RocksDB database in DIR/catalog that maps file ids to backing files and keeps
// a copy of the superblock and of the engine's options. Only src/catalog includes RocksDB
// headers; everything else sees this class. Every write is synced before it returns (the
// catalog is small and written rarely, and the cache's durability argument leans on it: a file
// id is durable here before any durable metadata entry names it, so write-back recovery can
// always find the path of a dirty page).
//
// Thread-safe: RocksDB serialises its own writes; id allocation and multi-key updates take an
// internal mutex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flashdir/format.h"
#include "flashdir/status.h"

namespace flashdir {

// What identifies the contents of a backing file: a change to any field means the cached pages
// may no longer match it (a same-size rewrite within one second changes mtime_ns or ctime_ns).
struct BackingIdentity {
  std::uint64_t dev = 0;
  std::uint64_t inode = 0;
  std::uint64_t size_bytes = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;

  bool operator==(const BackingIdentity&) const = default;
};

struct CatalogFile {
  std::uint64_t file_id = 0;        // never 0: ids start at 1
  std::string relative_path;        // relative to the backing root, no leading '/'
  BackingIdentity identity;

  bool operator==(const CatalogFile&) const = default;
};

class Catalog {
 public:
  enum class Access { read_only, read_write };

  // Creates an empty catalog; refused if one exists at `path`.
  static Result<std::unique_ptr<Catalog>> create(const std::filesystem::path& path);
  // A catalog RocksDB cannot read (damaged files, a bad record) is a corruption error naming
  // the catalog.
  static Result<std::unique_ptr<Catalog>> open(const std::filesystem::path& path, Access access);
  ~Catalog();

  Status put_superblock_copy(const format::Superblock& superblock);
  // not_found if the catalog has no copy; corruption if the copy fails its checks.
  Result<format::Superblock> superblock_copy() const;

  // The engine's options as text (JSON), kept so that a reopen can tell what the cache was
  // used with; not_found before the first put.
  Status put_options_text(std::string_view text);
  Result<std::string> options_text() const;

  // Records a new backing file under a fresh id, durably, and returns it. already_exists if the
  // path is recorded (use find_by_path first).
  Result<CatalogFile> add_file(std::string_view relative_path, const BackingIdentity& identity);
  // not_found if absent; corruption if the stored record is damaged.
  Result<CatalogFile> find_by_path(std::string_view relative_path) const;
  Result<CatalogFile> find_by_id(std::uint64_t file_id) const;
  // Records new validation attributes for a file (after its stale pages are dropped).
  Status update_identity(std::uint64_t file_id, const BackingIdentity& identity);
  // Renames a file, or a directory with every recorded file under it ("a/b" moves "a/b/c" to
  // "x/c"). A file recorded at `to` is forgotten; it is returned so the caller can drop its
  // pages first. Renaming something not recorded is not an error.
  Result<std::vector<CatalogFile>> files_replaced_by_rename(std::string_view from, std::string_view to) const;
  Status rename(std::string_view from, std::string_view to);
  Status remove_file(std::uint64_t file_id);
  // Every recorded file (fsck, tests).
  Result<std::vector<CatalogFile>> all_files() const;

 private:
  struct Db;
  explicit Catalog(std::unique_ptr<Db> db);
  std::unique_ptr<Db> db_;
};

}  // namespace flashdir
