#include "flashdir/catalog.h"

#include <sys/stat.h>

#include <cerrno>

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <mutex>
#include <vector>

#include "catalog/file_record.h"
#include "catalog/rocksdb_log.h"
#include "flashdir/file_io.h"
#include "flashdir/endian.h"

namespace flashdir {
namespace {

constexpr const char* kFormatKey = "meta/catalog_format";
constexpr const char* kSuperblockKey = "meta/superblock";
constexpr const char* kOptionsKey = "meta/options";
constexpr const char* kNextFileIdKey = "meta/next_file_id";
constexpr const char* kBackingRootKey = "meta/backing_root";
constexpr const char* kIdentityRuleKey = "meta/identity_rule";

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
  options.max_manifest_file_size = 4 << 20;
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  options.info_log = catalog::rocksdb_log("catalog");
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

std::string encode_format(std::uint32_t format) {
  std::string bytes(4, '\0');
  LittleEndianWriter(ByteSpan(reinterpret_cast<std::uint8_t*>(bytes.data()), bytes.size())).u32(format);
  return bytes;
}

}  // namespace

struct Catalog::Db {
  std::unique_ptr<rocksdb::DB> db;
  bool read_only = false;
  std::mutex write_mutex;  // id allocation and read-modify-write updates
  std::uint64_t id_limit = 0;         // guarded by write_mutex; 0: no reservation
  Catalog::RaiseIdLimit raise_limit;  // guarded by write_mutex
  mutable std::mutex failure_mutex;
  Status first_write_failure;  // guarded by failure_mutex

  Result<std::uint64_t> next_id() const {
    auto next = get(kNextFileIdKey, "reading the next file id");
    if (!next.is_ok()) return next.status().code() == StatusCode::not_found ? Result<std::uint64_t>(1) : next.status();
    auto decoded = catalog::decode_file_id(next.value());
    if (!decoded.is_ok()) return decoded.status().with_context("catalog: next file id");
    return decoded;
  }

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
  // The id an index entry names; not_found if there is none.
  Result<std::uint64_t> indexed(const std::string& key) const {
    auto value = get(key, "catalog: an index entry");
    if (!value.is_ok()) return value.status();
    return catalog::decode_file_id(value.value());
  }
  // The record the index entry `index_key` (which `what` describes) names: not_found if there
  // is no entry; corruption if the record is missing or is not what the entry says (`matches`).
  template <typename Matches>
  Result<CatalogFile> indexed_record(const std::string& index_key, const std::string& what, Matches matches) const {
    auto file_id = indexed(index_key);
    if (!file_id.is_ok()) return file_id.status().with_context(fmt::format("catalog: looking up {}", what));
    auto record = file(*file_id);
    if (!record.is_ok() && record.status().code() == StatusCode::not_found)
      return Status::corruption(fmt::format("catalog: {} names file {} which has no record", what, *file_id));
    if (!record.is_ok()) return record.status();
    if (!matches(*record)) {
      return Status::corruption(fmt::format("catalog: {} names file {}, recorded as {} (inode {})", what, *file_id,
                                            record->relative_path, record->attributes.inode));
    }
    return record;
  }
  bool empty() const {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(checked_reads()));
    it->SeekToFirst();
    return !it->Valid();
  }
  bool names(const std::string& index_key, std::uint64_t file_id) const {
    auto id = indexed(index_key);
    return id.is_ok() && *id == file_id;
  }
  Status write(rocksdb::WriteBatch& batch, const std::string& what) {
    if (read_only) return Status::invalid_argument(fmt::format("{}: the catalog is open read-only", what));
    Status status = from_rocksdb(db->Write(synced(), &batch), what);
    if (!status.is_ok()) {
      std::lock_guard lock(failure_mutex);
      if (first_write_failure.is_ok()) first_write_failure = status;
    }
    return status;
  }
  // The records the path index names at `path` itself and below it (a directory).
  Result<std::vector<CatalogFile>> at_and_under(std::string_view path) const {
    std::vector<CatalogFile> found;
    std::string key = catalog::path_key(path);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(checked_reads()));
    for (it->Seek(key); it->Valid() && it->key().starts_with(key); it->Next()) {
      const std::string_view rest = it->key().ToStringView().substr(key.size());
      if (!rest.empty() && rest.front() != '/') continue;  // "a/bc" is not under "a/b"
      auto file_id = catalog::decode_file_id(it->value().ToStringView());
      if (!file_id.is_ok()) return file_id.status().with_context("catalog: a path index entry");
      auto record = file(*file_id);
      if (!record.is_ok()) return record.status();
      found.push_back(std::move(record.value()));
    }
    FLASHDIR_TRY(from_rocksdb(it->status(), "catalog: listing paths"));
    return found;
  }
};

Catalog::Catalog(std::unique_ptr<Db> db) : db_(std::move(db)) {}
Catalog::~Catalog() = default;

Result<std::unique_ptr<Catalog>> Catalog::create(const std::filesystem::path& path) {
  rocksdb::Options options = catalog_options();
  options.create_if_missing = true;
  options.error_if_exists = true;
  // Made here, private, rather than by RocksDB: it logs the missing directory as an error.
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return errno_status(fmt::format("creating catalog directory {}", path.string()));
  rocksdb::DB* raw = nullptr;
  FLASHDIR_TRY(from_rocksdb(rocksdb::DB::Open(options, path.string(), &raw),
                            fmt::format("creating catalog {}", path.string())));
  auto db = std::make_unique<Db>();
  db->db.reset(raw);
  rocksdb::WriteBatch batch;
  batch.Put(kFormatKey, as_slice(encode_format(kFormat)));
  FLASHDIR_TRY(db->write(batch, "writing the catalog's format"));
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
  auto format = db->get(kFormatKey, context);
  if (!format.is_ok() && format.status().code() != StatusCode::not_found) return format.status();
  std::uint32_t found = 1;  // the first catalogs had no format key
  if (format.is_ok()) {
    if (format->size() != 4) return Status::corruption(fmt::format("{}: its format record is damaged", context));
    found = LittleEndianReader(ConstByteSpan(reinterpret_cast<const std::uint8_t*>(format->data()), 4)).u32();
  } else if (db->empty()) {
    // Not a catalog of the first format but one that lost everything (its write-ahead log
    // deleted before anything reached a table file): an empty catalog, which the engine's
    // checks (file id limit, backing record) treat as one that lost its records.
    if (db->read_only) return std::unique_ptr<Catalog>(new Catalog(std::move(db)));
    rocksdb::WriteBatch batch;
    batch.Put(kFormatKey, as_slice(encode_format(kFormat)));
    FLASHDIR_TRY(db->write(batch, "writing the catalog's format"));
    found = kFormat;
  }
  if (found != kFormat) {
    return Status::invalid_argument(fmt::format(
        "catalog {} has format {}, this flashdir reads format {}: format the cache again (mkfs.flashdir --force)",
        path.string(), found, kFormat));
  }
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

Status Catalog::put_backing_root(const BackingRootRecord& record) {
  rocksdb::WriteBatch batch;
  batch.Put(kBackingRootKey, as_slice(catalog::encode_backing_root(record)));
  return db_->write(batch, "writing the record of the backing directory to the catalog");
}

Result<BackingRootRecord> Catalog::backing_root() const {
  auto value = db_->get(kBackingRootKey, "reading the record of the backing directory from the catalog");
  if (!value.is_ok()) return value.status();
  return catalog::decode_backing_root(value.value());
}

Status Catalog::put_identity_rule(IdentityRule rule) {
  rocksdb::WriteBatch batch;
  batch.Put(kIdentityRuleKey, std::string(1, static_cast<char>(rule == IdentityRule::inode ? 1 : 2)));
  return db_->write(batch, "writing the identity rule to the catalog");
}

Result<IdentityRule> Catalog::identity_rule() const {
  auto value = db_->get(kIdentityRuleKey, "reading the identity rule from the catalog");
  if (!value.is_ok()) return value.status();
  if (*value == std::string(1, '\1')) return IdentityRule::inode;
  if (*value == std::string(1, '\2')) return IdentityRule::path;
  return Status::corruption("catalog: the identity rule record is damaged");
}

Result<std::uint64_t> Catalog::next_file_id() const { return db_->next_id(); }

Status Catalog::skip_file_ids_to(std::uint64_t next) {
  std::lock_guard lock(db_->write_mutex);
  auto current = db_->next_id();
  if (!current.is_ok()) return current.status();
  if (next <= *current) return Status::ok();
  rocksdb::WriteBatch batch;
  batch.Put(kNextFileIdKey, as_slice(catalog::encode_file_id(next)));
  return db_->write(batch, "catalog: moving the next file id forward");
}

void Catalog::reserve_ids(std::uint64_t limit, RaiseIdLimit raise) {
  std::lock_guard lock(db_->write_mutex);
  db_->id_limit = limit;
  db_->raise_limit = std::move(raise);
}

Result<CatalogFile> Catalog::add_file(std::string_view relative_path, const BackingAttributes& attributes) {
  FLASHDIR_TRY(catalog::check_relative_path(relative_path));
  std::lock_guard lock(db_->write_mutex);
  auto next = db_->next_id();
  if (!next.is_ok()) return next.status();
  const std::uint64_t file_id = *next;
  if (db_->id_limit != 0 && file_id >= db_->id_limit) {
    auto raised = db_->raise_limit(file_id);
    if (!raised.is_ok()) return raised.status().with_context("raising the cache's file id limit");
    if (*raised <= file_id) return Status::io_error("the cache's file id limit did not move past the next id");
    db_->id_limit = *raised;
  }
  CatalogFile file{file_id, std::string(relative_path), attributes};
  rocksdb::WriteBatch batch;
  batch.Put(kNextFileIdKey, as_slice(catalog::encode_file_id(file_id + 1)));
  batch.Put(catalog::file_key(file_id), as_slice(catalog::encode_file_record(file)));
  batch.Put(catalog::path_key(relative_path), as_slice(catalog::encode_file_id(file_id)));
  batch.Put(catalog::inode_key(attributes.device, attributes.inode), as_slice(catalog::encode_file_id(file_id)));
  FLASHDIR_TRY(db_->write(batch, fmt::format("catalog: recording {}", relative_path)));
  return file;
}

Result<CatalogFile> Catalog::find_by_path(std::string_view relative_path) const {
  return db_->indexed_record(catalog::path_key(relative_path), fmt::format("path {}", relative_path),
                             [&](const CatalogFile& file) { return file.relative_path == relative_path; });
}

Result<CatalogFile> Catalog::find_by_inode(std::uint64_t device, std::uint64_t inode) const {
  return db_->indexed_record(
      catalog::inode_key(device, inode), fmt::format("inode {} of device {}", inode, device),
      [&](const CatalogFile& file) { return file.attributes.device == device && file.attributes.inode == inode; });
}

Result<CatalogFile> Catalog::find_by_id(std::uint64_t file_id) const { return db_->file(file_id); }

Status Catalog::update(std::uint64_t file_id, std::string_view relative_path, const BackingAttributes& attributes) {
  FLASHDIR_TRY(catalog::check_relative_path(relative_path));
  std::lock_guard lock(db_->write_mutex);
  auto file = db_->file(file_id);
  if (!file.is_ok()) return file.status();
  rocksdb::WriteBatch batch;
  const std::string old_path = catalog::path_key(file->relative_path);
  const std::string new_path = catalog::path_key(relative_path);
  // An index entry moves with the record, and is taken only where nobody else holds it: a
  // record whose path another file took keeps its path as a hint, and takes the entry back only
  // once it is found at another path.
  if (old_path != new_path && db_->names(old_path, file_id)) batch.Delete(old_path);
  if (old_path != new_path || !db_->indexed(new_path).is_ok()) batch.Put(new_path, as_slice(catalog::encode_file_id(file_id)));
  const std::string old_inode = catalog::inode_key(file->attributes.device, file->attributes.inode);
  const std::string new_inode = catalog::inode_key(attributes.device, attributes.inode);
  if (old_inode != new_inode && db_->names(old_inode, file_id)) batch.Delete(old_inode);
  if (old_inode != new_inode || !db_->indexed(new_inode).is_ok())
    batch.Put(new_inode, as_slice(catalog::encode_file_id(file_id)));
  file->relative_path = std::string(relative_path);
  file->attributes = attributes;
  batch.Put(catalog::file_key(file_id), as_slice(catalog::encode_file_record(file.value())));
  return db_->write(batch, fmt::format("catalog: new attributes of {}", relative_path));
}

Result<std::vector<CatalogFile>> Catalog::rename(std::string_view from, std::string_view to, bool exchange) {
  FLASHDIR_TRY(catalog::check_relative_path(from));
  FLASHDIR_TRY(catalog::check_relative_path(to));
  std::vector<CatalogFile> replaced;
  if (from == to) return replaced;
  std::lock_guard lock(db_->write_mutex);
  auto moved = db_->at_and_under(from);
  if (!moved.is_ok()) return moved.status();
  auto at_target = db_->at_and_under(to);
  if (!at_target.is_ok()) return at_target.status();
  // Every old index entry goes first, then the new ones: with an exchange the two sets of
  // paths are each other's.
  rocksdb::WriteBatch batch;
  for (const CatalogFile& file : *moved) batch.Delete(catalog::path_key(file.relative_path));
  for (const CatalogFile& file : *at_target) batch.Delete(catalog::path_key(file.relative_path));
  const auto move = [&](CatalogFile file, std::string_view source, std::string_view target) {
    file.relative_path = std::string(target) + file.relative_path.substr(source.size());
    batch.Put(catalog::path_key(file.relative_path), as_slice(catalog::encode_file_id(file.file_id)));
    batch.Put(catalog::file_key(file.file_id), as_slice(catalog::encode_file_record(file)));
  };
  for (const CatalogFile& file : *moved) move(file, from, to);
  if (exchange) {
    for (const CatalogFile& file : *at_target) move(file, to, from);
  } else {
    replaced = std::move(at_target.value());
  }
  FLASHDIR_TRY(db_->write(batch, fmt::format("catalog: renaming {} to {}", from, to)));
  return replaced;
}

Status Catalog::write_failure() const {
  std::lock_guard lock(db_->failure_mutex);
  return db_->first_write_failure;
}

Status Catalog::mark_unwritten(std::uint64_t file_id, bool unwritten) {
  rocksdb::WriteBatch batch;
  if (unwritten) {
    batch.Put(catalog::unwritten_key(file_id), "");
  } else {
    batch.Delete(catalog::unwritten_key(file_id));
  }
  return db_->write(batch, fmt::format("catalog: marking file {} {}", file_id, unwritten ? "unwritten" : "written back"));
}

Result<std::vector<std::uint64_t>> Catalog::unwritten_files() const {
  std::vector<std::uint64_t> files;
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(checked_reads()));
  const std::string prefix = catalog::unwritten_key_prefix();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto file_id = catalog::file_id_of_unwritten_key(it->key().ToStringView());
    if (!file_id.is_ok()) return file_id.status();
    files.push_back(*file_id);
  }
  FLASHDIR_TRY(from_rocksdb(it->status(), "catalog: listing files with unwritten data"));
  return files;
}

Status Catalog::unindex(std::uint64_t file_id) {
  std::lock_guard lock(db_->write_mutex);
  auto file = db_->file(file_id);
  if (!file.is_ok()) return file.status();
  rocksdb::WriteBatch batch;
  const std::string path = catalog::path_key(file->relative_path);
  if (db_->names(path, file_id)) batch.Delete(path);
  const std::string inode = catalog::inode_key(file->attributes.device, file->attributes.inode);
  if (db_->names(inode, file_id)) batch.Delete(inode);
  return db_->write(batch, fmt::format("catalog: unindexing {}", file->relative_path));
}

Status Catalog::remove_file(std::uint64_t file_id) {
  std::lock_guard lock(db_->write_mutex);
  auto file = db_->file(file_id);
  if (!file.is_ok()) return file.status();
  rocksdb::WriteBatch batch;
  batch.Delete(catalog::file_key(file_id));
  batch.Delete(catalog::unwritten_key(file_id));
  const std::string path = catalog::path_key(file->relative_path);
  if (db_->names(path, file_id)) batch.Delete(path);
  const std::string inode = catalog::inode_key(file->attributes.device, file->attributes.inode);
  if (db_->names(inode, file_id)) batch.Delete(inode);
  return db_->write(batch, fmt::format("catalog: forgetting {}", file->relative_path));
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

}  // namespace flashdir
