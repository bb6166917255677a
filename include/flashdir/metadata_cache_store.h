// Where the daemon keeps its metadata cache across restarts (doc/daemon.md "Metadata cache"): a
// RocksDB database in CACHE/metadata, beside the catalog, holding records the daemon encodes.
// Only src/catalog includes RocksDB headers.
//
// Unlike the catalog's, its writes are not synced: every record is a hint with an expiry that
// the daemon checks, and a restart on a new boot (after a power cut, when unsynced writes may
// be lost) drops it whole. A write has reached RocksDB's log file when it returns, so it
// survives the daemon's own crash (kill -9): a change made through the mount that removed a
// record stays removed.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashdir/status.h"

namespace flashdir {

class MetadataCacheStore {
 public:
  // Creates the database if it is missing; a damaged one is an error naming it (the caller
  // may remove it: it holds nothing that cannot be asked of the backing again).
  static Result<std::unique_ptr<MetadataCacheStore>> open(const std::filesystem::path& path);
  ~MetadataCacheStore();

  struct Change {
    std::string key;
    std::optional<std::string> value;  // nullopt: remove the record
  };
  // Applies the changes in one atomic batch, unsynced.
  Status apply(const std::vector<Change>& changes);
  // Calls visit(key, value) for every record, in key order.
  Status for_each(const std::function<void(std::string_view key, std::string_view value)>& visit) const;
  // Removes every record.
  Status clear();

 private:
  struct Db;
  explicit MetadataCacheStore(std::unique_ptr<Db> db);
  std::unique_ptr<Db> db_;
};

}  // namespace flashdir
