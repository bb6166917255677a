#include "fs/directory_listing.h"

#include <algorithm>

#include "flashdir/endian.h"
#include "flashdir/format.h"

namespace flashdir::fs {
namespace {

// version (mtime, ctime, size), entry count; per entry: inode, type, name length, name; checksum.
constexpr std::size_t kHeadBytes = 4 * 8;
constexpr std::size_t kEntryHeadBytes = 8 + 1 + 2;
constexpr std::size_t kChecksumBytes = 8;

}  // namespace

std::uint64_t record_checksum(std::string_view key, ConstByteSpan body) {
  std::string bytes(key);
  bytes.append(reinterpret_cast<const char*>(body.data()), body.size());
  return format::xxh3(ConstByteSpan(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

DirectoryVersion DirectoryVersion::of(const struct stat& st) {
  return {ns_of(st.st_mtim), ns_of(st.st_ctim), static_cast<std::int64_t>(st.st_size)};
}

bool version_is_settled(const DirectoryVersion& version, std::int64_t stat_ns) {
  const auto racy_ns = static_cast<std::int64_t>(kRacyChangeSeconds * 1e9);
  return std::max(version.mtime_ns, version.ctime_ns) <= stat_ns - racy_ns;
}

std::string encode_listing(std::string_view key, const DirectoryListing& listing) {
  std::size_t size = kHeadBytes + kChecksumBytes;
  for (const ListedEntry& entry : listing.entries) size += kEntryHeadBytes + entry.name.size();
  std::string value(size, '\0');
  ByteSpan bytes(reinterpret_cast<std::uint8_t*>(value.data()), value.size());
  LittleEndianWriter out(bytes);
  out.u64(static_cast<std::uint64_t>(listing.version.mtime_ns));
  out.u64(static_cast<std::uint64_t>(listing.version.ctime_ns));
  out.u64(static_cast<std::uint64_t>(listing.version.size));
  out.u64(listing.entries.size());
  for (const ListedEntry& entry : listing.entries) {
    out.u64(entry.ino);
    out.u8(entry.type);
    out.u16(static_cast<std::uint16_t>(entry.name.size()));  // NAME_MAX is 255
    out.bytes(ConstByteSpan(reinterpret_cast<const std::uint8_t*>(entry.name.data()), entry.name.size()));
  }
  out.u64(record_checksum(key, bytes.first(size - kChecksumBytes)));
  return value;
}

std::optional<DirectoryListing> decode_listing(std::string_view key, std::string_view value) {
  if (value.size() < kHeadBytes + kChecksumBytes) return std::nullopt;
  const ConstByteSpan bytes(reinterpret_cast<const std::uint8_t*>(value.data()), value.size());
  const ConstByteSpan body = bytes.first(bytes.size() - kChecksumBytes);
  if (LittleEndianReader(bytes.subspan(body.size())).u64() != record_checksum(key, body)) return std::nullopt;
  LittleEndianReader in(body);
  DirectoryListing listing;
  listing.version.mtime_ns = static_cast<std::int64_t>(in.u64());
  listing.version.ctime_ns = static_cast<std::int64_t>(in.u64());
  listing.version.size = static_cast<std::int64_t>(in.u64());
  const std::uint64_t count = in.u64();
  if (count > in.remaining() / kEntryHeadBytes) return std::nullopt;
  listing.entries.resize(count);
  for (ListedEntry& entry : listing.entries) {
    if (in.remaining() < kEntryHeadBytes) return std::nullopt;
    entry.ino = in.u64();
    entry.type = in.u8();
    const std::uint16_t length = in.u16();
    if (length == 0 || in.remaining() < length) return std::nullopt;
    entry.name.resize(length);
    in.bytes(ByteSpan(reinterpret_cast<std::uint8_t*>(entry.name.data()), length));
  }
  if (in.remaining() != 0) return std::nullopt;
  return listing;
}

}  // namespace flashdir::fs
