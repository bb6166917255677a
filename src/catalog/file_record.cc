#include "catalog/file_record.h"

#include <fmt/format.h>

#include <vector>

#include "flashdir/endian.h"

namespace flashdir::catalog {
namespace {

constexpr std::uint8_t kFileRecordVersion = 2;
constexpr std::size_t kFileRecordFixedBytes = 1 + 8 * 3 + 4 * 2 + 8 * 3 + 4;
constexpr std::uint8_t kBackingRootVersion = 1;
constexpr std::size_t kBackingRootFixedBytes = 1 + 8 * 4 + 4 + 8;
constexpr std::string_view kFilePrefix = "file/";
constexpr std::string_view kPathPrefix = "path/";
constexpr std::string_view kInodePrefix = "inode/";
constexpr std::string_view kUnwrittenPrefix = "unwritten/";

ConstByteSpan bytes_of(std::string_view s) {
  return ConstByteSpan(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

ByteSpan writable_bytes_of(std::string& s) { return ByteSpan(reinterpret_cast<std::uint8_t*>(s.data()), s.size()); }

void append_big_endian(std::string& key, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>(value >> shift));
}

}  // namespace

std::string file_key(std::uint64_t file_id) {
  std::string key(kFilePrefix);
  append_big_endian(key, file_id);
  return key;
}

std::string file_key_prefix() { return std::string(kFilePrefix); }

namespace {

// The id a key of `prefix` + u64 BE names.
Result<std::uint64_t> id_of_key(std::string_view key, std::string_view prefix) {
  if (key.size() != prefix.size() + 8 || !key.starts_with(prefix)) {
    return Status::corruption(fmt::format("catalog: malformed {} key of {} bytes", prefix, key.size()));
  }
  std::uint64_t file_id = 0;
  for (char c : key.substr(prefix.size())) file_id = (file_id << 8) | static_cast<std::uint8_t>(c);
  return file_id;
}

}  // namespace

Result<std::uint64_t> file_id_of_key(std::string_view key) { return id_of_key(key, kFilePrefix); }

std::string unwritten_key(std::uint64_t file_id) {
  std::string key(kUnwrittenPrefix);
  append_big_endian(key, file_id);
  return key;
}

std::string unwritten_key_prefix() { return std::string(kUnwrittenPrefix); }

Result<std::uint64_t> file_id_of_unwritten_key(std::string_view key) { return id_of_key(key, kUnwrittenPrefix); }

std::string path_key(std::string_view relative_path) {
  std::string key(kPathPrefix);
  key.append(relative_path);
  return key;
}

std::string inode_key(std::uint64_t device, std::uint64_t inode) {
  std::string key(kInodePrefix);
  append_big_endian(key, device);
  append_big_endian(key, inode);
  return key;
}

std::string encode_u64(std::uint64_t value) {
  std::string bytes(8, '\0');
  LittleEndianWriter(writable_bytes_of(bytes)).u64(value);
  return bytes;
}

std::string encode_file_id(std::uint64_t file_id) { return encode_u64(file_id); }

Result<std::uint64_t> decode_file_id(std::string_view bytes) {
  if (bytes.size() != 8) return Status::corruption(fmt::format("catalog: a file id of {} bytes, not 8", bytes.size()));
  LittleEndianReader reader(bytes_of(bytes));
  const std::uint64_t file_id = reader.u64();
  if (file_id == 0) return Status::corruption("catalog: file id 0");
  return file_id;
}

std::string encode_file_record(const CatalogFile& file) {
  const BackingAttributes& a = file.attributes;
  std::string bytes(kFileRecordFixedBytes + file.relative_path.size(), '\0');
  LittleEndianWriter writer(writable_bytes_of(bytes));
  writer.u8(kFileRecordVersion);
  writer.u64(a.device);
  writer.u64(a.inode);
  writer.u64(static_cast<std::uint64_t>(a.birth_ns));
  writer.u32(a.uid);
  writer.u32(a.gid);
  writer.u64(a.size_bytes);
  writer.u64(static_cast<std::uint64_t>(a.mtime_ns));
  writer.u64(static_cast<std::uint64_t>(a.ctime_ns));
  writer.u32(static_cast<std::uint32_t>(file.relative_path.size()));
  writer.bytes(bytes_of(file.relative_path));
  return bytes;
}

Result<CatalogFile> decode_file_record(std::uint64_t file_id, std::string_view bytes) {
  const auto bad = [&](std::string_view why) {
    return Status::corruption(fmt::format("catalog: record of file {} {}", file_id, why));
  };
  if (bytes.size() < kFileRecordFixedBytes) return bad(fmt::format("is {} bytes, too short", bytes.size()));
  LittleEndianReader reader(bytes_of(bytes));
  if (reader.u8() != kFileRecordVersion) return bad("has an unknown version");
  CatalogFile file;
  file.file_id = file_id;
  BackingAttributes& a = file.attributes;
  a.device = reader.u64();
  a.inode = reader.u64();
  a.birth_ns = static_cast<std::int64_t>(reader.u64());
  a.uid = reader.u32();
  a.gid = reader.u32();
  a.size_bytes = reader.u64();
  a.mtime_ns = static_cast<std::int64_t>(reader.u64());
  a.ctime_ns = static_cast<std::int64_t>(reader.u64());
  const std::uint32_t path_bytes = reader.u32();
  if (path_bytes != bytes.size() - kFileRecordFixedBytes) return bad("has a path length that disagrees with its size");
  file.relative_path.assign(bytes.substr(kFileRecordFixedBytes));
  if (!check_relative_path(file.relative_path).is_ok()) return bad("holds an invalid path");
  return file;
}

std::string encode_backing_root(const BackingRootRecord& record) {
  std::string bytes(kBackingRootFixedBytes + record.path.size(), '\0');
  LittleEndianWriter writer(writable_bytes_of(bytes));
  writer.u8(kBackingRootVersion);
  writer.u64(record.fs_type);
  writer.u64(record.fs_id);
  writer.u64(record.root_inode);
  writer.u64(static_cast<std::uint64_t>(record.root_birth_ns));
  writer.u32(static_cast<std::uint32_t>(record.path.size()));
  writer.bytes(bytes_of(record.path));
  writer.u64(format::xxh3(bytes_of(std::string_view(bytes).substr(0, bytes.size() - 8))));
  return bytes;
}

Result<BackingRootRecord> decode_backing_root(std::string_view bytes) {
  const auto bad = [](std::string_view why) {
    return Status::corruption(fmt::format("catalog: the record of the backing directory {}", why));
  };
  if (bytes.size() < kBackingRootFixedBytes) return bad(fmt::format("is {} bytes, too short", bytes.size()));
  LittleEndianReader trailer(bytes_of(bytes.substr(bytes.size() - 8)));
  if (trailer.u64() != format::xxh3(bytes_of(bytes.substr(0, bytes.size() - 8)))) return bad("fails its checksum");
  LittleEndianReader reader(bytes_of(bytes));
  if (reader.u8() != kBackingRootVersion) return bad("has an unknown version");
  BackingRootRecord record;
  record.fs_type = reader.u64();
  record.fs_id = reader.u64();
  record.root_inode = reader.u64();
  record.root_birth_ns = static_cast<std::int64_t>(reader.u64());
  const std::uint32_t path_bytes = reader.u32();
  if (path_bytes != bytes.size() - kBackingRootFixedBytes) return bad("has a path length that disagrees with its size");
  record.path.assign(bytes.substr(kBackingRootFixedBytes - 8, path_bytes));
  return record;
}

Status check_relative_path(std::string_view relative_path) {
  const auto bad = [&](std::string_view why) {
    return Status::invalid_argument(fmt::format("backing path '{}' {}", relative_path, why));
  };
  if (relative_path.empty()) return bad("is empty");
  if (relative_path.front() == '/' || relative_path.back() == '/') return bad("must be relative, without a trailing '/'");
  if (relative_path.find('\0') != std::string_view::npos) return bad("contains a NUL byte");
  std::size_t start = 0;
  while (start <= relative_path.size()) {
    const std::size_t end = std::min(relative_path.find('/', start), relative_path.size());
    const std::string_view part = relative_path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return bad("has an empty, '.' or '..' component");
    start = end + 1;
  }
  return Status::ok();
}

}  // namespace flashdir::catalog
