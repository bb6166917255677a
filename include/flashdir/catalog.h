// The catalog: a RocksDB database in DIR/catalog that maps file ids to backing files and keeps
// a copy of the superblock. Only src/catalog includes RocksDB headers; everything else sees
// this class. Every write is synced before it returns (the catalog is small and written
// rarely, and the cache's durability argument leans on it).
#pragma once

#include <filesystem>
#include <memory>

#include "flashdir/format.h"
#include "flashdir/status.h"

namespace flashdir {

class Catalog {
 public:
  enum class Access { read_only, read_write };

  // Creates an empty catalog; refused if one exists at `path`.
  static Result<std::unique_ptr<Catalog>> create(const std::filesystem::path& path);
  static Result<std::unique_ptr<Catalog>> open(const std::filesystem::path& path, Access access);
  ~Catalog();

  Status put_superblock_copy(const format::Superblock& superblock);
  // not_found if the catalog has no copy; corruption if the copy fails its checks.
  Result<format::Superblock> superblock_copy() const;

 private:
  struct Db;
  explicit Catalog(std::unique_ptr<Db> db);
  std::unique_ptr<Db> db_;
};

}  // namespace flashdir
