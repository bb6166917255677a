#include "flashdir/metadata_cache_store.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "catalog/rocksdb_log.h"

namespace flashdir {
namespace {

Status from_rocksdb(const rocksdb::Status& s, const std::string& context) {
  if (s.ok()) return Status::ok();
  if (s.IsCorruption()) return Status::corruption(fmt::format("{}: {}", context, s.ToString()));
  return Status::io_error(fmt::format("{}: {}", context, s.ToString()));
}

}  // namespace

struct MetadataCacheStore::Db {
  std::unique_ptr<rocksdb::DB> db;
  std::string path;
};

MetadataCacheStore::MetadataCacheStore(std::unique_ptr<Db> db) : db_(std::move(db)) {}
MetadataCacheStore::~MetadataCacheStore() = default;

Result<std::unique_ptr<MetadataCacheStore>> MetadataCacheStore::open(const std::filesystem::path& path) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  options.max_manifest_file_size = 4 << 20;
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  options.info_log = catalog::rocksdb_log("metadata cache");
  // Made first: RocksDB logs an error for a directory it has to create.
  std::error_code made;
  std::filesystem::create_directories(path, made);
  rocksdb::DB* raw = nullptr;
  FLASHDIR_TRY(from_rocksdb(rocksdb::DB::Open(options, path.string(), &raw),
                            fmt::format("opening the metadata cache {}", path.string())));
  auto db = std::make_unique<Db>();
  db->db.reset(raw);
  db->path = path.string();
  return std::unique_ptr<MetadataCacheStore>(new MetadataCacheStore(std::move(db)));
}

Status MetadataCacheStore::apply(const std::vector<Change>& changes) {
  rocksdb::WriteBatch batch;
  for (const Change& change : changes) {
    if (change.value) {
      batch.Put(change.key, *change.value);
    } else {
      batch.Delete(change.key);
    }
  }
  return from_rocksdb(db_->db->Write(rocksdb::WriteOptions(), &batch),
                      fmt::format("writing the metadata cache {}", db_->path));
}

Status MetadataCacheStore::for_each(const std::function<void(std::string_view, std::string_view)>& visit) const {
  rocksdb::ReadOptions reads;
  reads.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(reads));
  for (it->SeekToFirst(); it->Valid(); it->Next())
    visit(std::string_view(it->key().data(), it->key().size()), std::string_view(it->value().data(), it->value().size()));
  return from_rocksdb(it->status(), fmt::format("reading the metadata cache {}", db_->path));
}

Status MetadataCacheStore::clear() {
  std::vector<Change> removals;
  FLASHDIR_TRY(for_each([&](std::string_view key, std::string_view) { removals.push_back({std::string(key), std::nullopt}); }));
  return apply(removals);
}

}  // namespace flashdir
