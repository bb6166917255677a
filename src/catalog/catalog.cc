#include "flashdir/catalog.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <mutex>
#include <vector>

#include "catalog/file_record.h"

namespace flashdir {
namespace {

constexpr const char* kSuperblockKey = "meta/superblock";
constexpr const char* kOptionsKey = "meta/options";
constexpr const char* kNextFileIdKey = "meta/next_file_id";

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

rocksdb::WriteOptions synced() {
  rocksdb::WriteOptions options;
  options.sync = true;
  return options;
}

rocksdb::ReadOptions checked_reads() {
  rocksdb::ReadOptions options;
  options.verify_checksums = true;
  return options;
}

rocksdb::Slice as_slice(const std::string& s) { return rocksdb::Slice(s.data(), s.size()); }

}  // namespace

struct Catalog::Db {
  std::unique_ptr<rocksdb::DB> db;
  bool read_only = false;
  std::mutex write_mutex;  // id allocation and read-modify-write updates

  Result<std::string> get(const std::string& key, const std::string& what) const {
    std::string value;
    FLASHDIR_TRY(from_rocksdb(db->Get(checked_reads(), key, &value), what));
    return value;
  }
  Result<CatalogFile> file(std::uint64_t file_id) const {
    auto value = get(catalog::file_key(file_id), fmt::format("reading file {} from the catalog", file_id));
    if (!value.is_ok()) return value.status();
    return catalog::decode_file_record(file_id, value.value());
  }
  Status write(rocksdb::WriteBatch& batch, const std::string& what) {
    if (read_only) return Status::invalid_argument(fmt::format("{}: the catalog is open read-only", what));
    return from_rocksdb(db->Write(synced(), &batch), what);
  }
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
  rocksdb::WriteBatch batch;
  batch.Put(kSuperblockKey, rocksdb::Slice(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return db_->write(batch, "writing the superblock copy to the catalog");
}

Result<format::Superblock> Catalog::superblock_copy() const {
  auto value = db_->get(kSuperblockKey, "reading the superblock copy from the catalog");
  if (!value.is_ok()) return value.status();
  auto sb = format::decode_superblock(
      ConstByteSpan(reinterpret_cast<const std::uint8_t*>(value->data()), value->size()));
  if (!sb.is_ok()) return sb.status().with_context("catalog copy of the superblock");
  return sb;
}

Status Catalog::put_options_text(std::string_view text) {
  rocksdb::WriteBatch batch;
  batch.Put(kOptionsKey, rocksdb::Slice(text.data(), text.size()));
  return db_->write(batch, "writing the options to the catalog");
}

Result<std::string> Catalog::options_text() const {
  return db_->get(kOptionsKey, "reading the options from the catalog");
}

Result<CatalogFile> Catalog::add_file(std::string_view relative_path, const BackingIdentity& identity) {
  FLASHDIR_TRY(catalog::check_relative_path(relative_path));
  std::lock_guard lock(db_->write_mutex);
  const std::string path_key = catalog::path_key(relative_path);
  std::string ignored;
  const rocksdb::Status existing = db_->db->Get(checked_reads(), path_key, &ignored);
  if (existing.ok()) return Status::already_exists(fmt::format("catalog: {} is already recorded", relative_path));
  if (!existing.IsNotFound()) return from_rocksdb(existing, "catalog: looking up a path");

  std::uint64_t file_id = 1;
  auto next = db_->get(kNextFileIdKey, "reading the next file id");
  if (next.is_ok()) {
    auto decoded = catalog::decode_file_id(next.value());
    if (!decoded.is_ok()) return decoded.status().with_context("catalog: next file id");
    file_id = decoded.value();
  } else if (next.status().code() != StatusCode::not_found) {
    return next.status();
  }
  CatalogFile file{file_id, std::string(relative_path), identity};
  rocksdb::WriteBatch batch;
  batch.Put(kNextFileIdKey, as_slice(catalog::encode_file_id(file_id + 1)));
  batch.Put(catalog::file_key(file_id), as_slice(catalog::encode_file_record(file)));
  batch.Put(path_key, as_slice(catalog::encode_file_id(file_id)));
  FLASHDIR_TRY(db_->write(batch, fmt::format("catalog: recording {}", relative_path)));
  return file;
}

Result<CatalogFile> Catalog::find_by_path(std::string_view relative_path) const {
  auto value = db_->get(catalog::path_key(relative_path), fmt::format("catalog: looking up {}", relative_path));
  if (!value.is_ok()) return value.status();
  auto file_id = catalog::decode_file_id(value.value());
  if (!file_id.is_ok()) return file_id.status().with_context(fmt::format("catalog: path {}", relative_path));
  auto file = db_->file(file_id.value());
  if (!file.is_ok()) {
    if (file.status().code() == StatusCode::not_found) {
      return Status::corruption(fmt::format("catalog: path {} names file {} which has no record", relative_path,
                                            file_id.value()));
    }
    return file.status();
  }
  if (file->relative_path != relative_path) {
    return Status::corruption(fmt::format("catalog: path {} names file {} recorded as {}", relative_path,
                                          file_id.value(), file->relative_path));
  }
  return file;
}

Result<CatalogFile> Catalog::find_by_id(std::uint64_t file_id) const { return db_->file(file_id); }

Status Catalog::update_identity(std::uint64_t file_id, const BackingIdentity& identity) {
  std::lock_guard lock(db_->write_mutex);
  auto file = db_->file(file_id);
  if (!file.is_ok()) return file.status();
  file->identity = identity;
  rocksdb::WriteBatch batch;
  batch.Put(catalog::file_key(file_id), as_slice(catalog::encode_file_record(file.value())));
  return db_->write(batch, fmt::format("catalog: new attributes of {}", file->relative_path));
}

Result<std::vector<CatalogFile>> Catalog::all_files() const {
  std::vector<CatalogFile> files;
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(checked_reads()));
  const std::string prefix = catalog::file_key_prefix();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto file_id = catalog::file_id_of_key(it->key().ToStringView());
    if (!file_id.is_ok()) return file_id.status();
    auto file = catalog::decode_file_record(file_id.value(), it->value().ToStringView());
    if (!file.is_ok()) return file.status();
    files.push_back(std::move(file.value()));
  }
  FLASHDIR_TRY(from_rocksdb(it->status(), "catalog: listing files"));
  return files;
}

Result<std::vector<CatalogFile>> Catalog::files_replaced_by_rename(std::string_view from, std::string_view to) const {
  std::vector<CatalogFile> replaced;
  if (from == to) return replaced;
  auto target = find_by_path(to);
  if (target.is_ok()) {
    replaced.push_back(std::move(target.value()));
  } else if (target.status().code() != StatusCode::not_found) {
    return target.status();
  }
  return replaced;
}

Status Catalog::rename(std::string_view from, std::string_view to) {
  FLASHDIR_TRY(catalog::check_relative_path(from));
  FLASHDIR_TRY(catalog::check_relative_path(to));
  if (from == to) return Status::ok();
  std::lock_guard lock(db_->write_mutex);
  rocksdb::WriteBatch batch;
  auto replaced = files_replaced_by_rename(from, to);
  if (!replaced.is_ok()) return replaced.status();
  for (const CatalogFile& file : replaced.value()) {
    batch.Delete(catalog::file_key(file.file_id));
    batch.Delete(catalog::path_key(file.relative_path));
  }
  // The file at `from` itself, and every file under it if it is a directory: path keys sort
  // by path, so those are one range.
  std::vector<CatalogFile> moved;
  auto single = find_by_path(from);
  if (single.is_ok()) {
    moved.push_back(std::move(single.value()));
  } else if (single.status().code() != StatusCode::not_found) {
    return single.status();
  }
  const std::string under = catalog::path_key(from) + "/";
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(checked_reads()));
  for (it->Seek(under); it->Valid() && it->key().starts_with(under); it->Next()) {
    auto file_id = catalog::decode_file_id(it->value().ToStringView());
    if (!file_id.is_ok()) return file_id.status().with_context("catalog: renaming a directory");
    auto file = db_->file(file_id.value());
    if (!file.is_ok()) return file.status();
    moved.push_back(std::move(file.value()));
  }
  FLASHDIR_TRY(from_rocksdb(it->status(), "catalog: listing a directory"));
  for (CatalogFile& file : moved) {
    batch.Delete(catalog::path_key(file.relative_path));
    file.relative_path = std::string(to) + file.relative_path.substr(from.size());
    batch.Put(catalog::path_key(file.relative_path), as_slice(catalog::encode_file_id(file.file_id)));
    batch.Put(catalog::file_key(file.file_id), as_slice(catalog::encode_file_record(file)));
  }
  return db_->write(batch, fmt::format("catalog: renaming {} to {}", from, to));
}

Status Catalog::remove_file(std::uint64_t file_id) {
  std::lock_guard lock(db_->write_mutex);
  auto file = db_->file(file_id);
  if (!file.is_ok()) return file.status();
  rocksdb::WriteBatch batch;
  batch.Delete(catalog::file_key(file_id));
  batch.Delete(catalog::path_key(file->relative_path));
  return db_->write(batch, fmt::format("catalog: forgetting {}", file->relative_path));
}

}  // namespace flashdir
