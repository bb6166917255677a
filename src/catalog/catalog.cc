#include "flashdir/catalog.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <vector>

namespace flashdir {
namespace {

constexpr const char* kSuperblockKey = "meta/superblock";

Status from_rocksdb(const rocksdb::Status& s, const std::string& context) {
  if (s.ok()) return Status::ok();
  if (s.IsNotFound()) return Status::not_found(fmt::format("{}: {}", context, s.ToString()));
  if (s.IsCorruption()) return Status::corruption(fmt::format("{}: {}", context, s.ToString()));
  if (s.IsInvalidArgument()) return Status::invalid_argument(fmt::format("{}: {}", context, s.ToString()));
  return Status::io_error(fmt::format("{}: {}", context, s.ToString()));
}

rocksdb::Options catalog_options() {
  rocksdb::Options options;
  options.paranoid_checks = true;
  options.keep_log_file_num = 2;
  options.max_manifest_file_size = 4 << 20;
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  return options;
}

}  // namespace

struct Catalog::Db {
  std::unique_ptr<rocksdb::DB> db;
  bool read_only = false;
};

Catalog::Catalog(std::unique_ptr<Db> db) : db_(std::move(db)) {}
Catalog::~Catalog() = default;

Result<std::unique_ptr<Catalog>> Catalog::create(const std::filesystem::path& path) {
  rocksdb::Options options = catalog_options();
  options.create_if_missing = true;
  options.error_if_exists = true;
  rocksdb::DB* raw = nullptr;
  FLASHDIR_TRY(from_rocksdb(rocksdb::DB::Open(options, path.string(), &raw),
                            fmt::format("creating catalog {}", path.string())));
  auto db = std::make_unique<Db>();
  db->db.reset(raw);
  return std::unique_ptr<Catalog>(new Catalog(std::move(db)));
}

Result<std::unique_ptr<Catalog>> Catalog::open(const std::filesystem::path& path, Access access) {
  rocksdb::Options options = catalog_options();
  rocksdb::DB* raw = nullptr;
  const std::string context = fmt::format("opening catalog {}", path.string());
  if (access == Access::read_only) {
    FLASHDIR_TRY(from_rocksdb(rocksdb::DB::OpenForReadOnly(options, path.string(), &raw), context));
  } else {
    FLASHDIR_TRY(from_rocksdb(rocksdb::DB::Open(options, path.string(), &raw), context));
  }
  auto db = std::make_unique<Db>();
  db->db.reset(raw);
  db->read_only = access == Access::read_only;
  return std::unique_ptr<Catalog>(new Catalog(std::move(db)));
}

Status Catalog::put_superblock_copy(const format::Superblock& superblock) {
  std::vector<std::uint8_t> bytes(format::kSuperblockEncodedSize);
  format::encode_superblock(superblock, bytes);
  rocksdb::WriteOptions options;
  options.sync = true;
  return from_rocksdb(
      db_->db->Put(options, kSuperblockKey,
                   rocksdb::Slice(reinterpret_cast<const char*>(bytes.data()), bytes.size())),
      "writing the superblock copy to the catalog");
}

Result<format::Superblock> Catalog::superblock_copy() const {
  std::string value;
  FLASHDIR_TRY(from_rocksdb(db_->db->Get(rocksdb::ReadOptions(), kSuperblockKey, &value),
                            "reading the superblock copy from the catalog"));
  auto sb = format::decode_superblock(
      ConstByteSpan(reinterpret_cast<const std::uint8_t*>(value.data()), value.size()));
  if (!sb.is_ok()) return sb.status().with_context("catalog copy of the superblock");
  return sb;
}

}  // namespace flashdir
