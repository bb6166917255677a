#include "fs/metadata_cache.h"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>

#include <spdlog/spdlog.h>

#include "flashdir/endian.h"
#include "flashdir/format.h"

namespace flashdir::fs {
namespace {

// Store keys: one header, then one record per name and one per directory listing.
constexpr char kHeaderKey[] = "h";
constexpr char kNamePrefix = 'n';
constexpr char kListingPrefix = 'l';
// Version 2 added the directory's version and the object's file handle to each record; a store
// of version 1 is dropped whole at the next mount (its header differs), as one from another
// boot is.
constexpr std::string_view kHeaderTag = "flashdir metadata cache 2";

// The attributes a record keeps, in order.
constexpr std::size_t kStatFields = 16;
// The first byte's flags.
constexpr std::uint8_t kPresent = 1;
constexpr std::uint8_t kHasParentVersion = 2;
// The flags, checked_ns, the attributes, the parent's version (zeros if none), the handle's
// length, the checksum; then the handle's bytes before the checksum.
constexpr std::size_t kValueBytes = 1 + 8 + 8 * kStatFields + 3 * 8 + 2 + 8;
// A struct file_handle, its header and at most MAX_HANDLE_SZ bytes.
constexpr std::size_t kMaxHandleRecordBytes = sizeof(struct file_handle) + MAX_HANDLE_SZ;

// A handle as name_to_handle_at writes it: its header's length agrees with its size.
bool well_formed_handle(const HandleBytes& handle) {
  if (handle.empty()) return true;
  if (handle.size() < sizeof(struct file_handle) || handle.size() > kMaxHandleRecordBytes) return false;
  struct file_handle header {};
  std::memcpy(&header, handle.data(), sizeof header);
  return sizeof(struct file_handle) + header.handle_bytes == handle.size();
}

std::string header_value(const std::string& boot_id, ObjectId root) {
  std::string value(kHeaderTag);
  value += '\n';
  value += boot_id;
  value += '\n';
  value += std::to_string(root.dev) + ":" + std::to_string(root.ino);
  return value;
}

std::string encode_key(ObjectId parent, std::string_view name) {
  std::string key(1 + 16 + name.size(), '\0');
  key[0] = kNamePrefix;
  LittleEndianWriter out(ByteSpan(reinterpret_cast<std::uint8_t*>(key.data()) + 1, 16));
  out.u64(parent.dev);
  out.u64(parent.ino);
  std::copy(name.begin(), name.end(), key.begin() + 17);
  return key;
}

std::string encode_listing_key(ObjectId dir) {
  std::string key(1 + 16, '\0');
  key[0] = kListingPrefix;
  LittleEndianWriter out(ByteSpan(reinterpret_cast<std::uint8_t*>(key.data()) + 1, 16));
  out.u64(dir.dev);
  out.u64(dir.ino);
  return key;
}

std::optional<ObjectId> decode_listing_key(std::string_view key) {
  if (key.size() != 17 || key[0] != kListingPrefix) return std::nullopt;
  LittleEndianReader in(ConstByteSpan(reinterpret_cast<const std::uint8_t*>(key.data()) + 1, 16));
  ObjectId dir;
  dir.dev = in.u64();
  dir.ino = in.u64();
  return dir;
}

std::optional<std::pair<ObjectId, std::string>> decode_key(std::string_view key) {
  if (key.size() < 18 || key[0] != kNamePrefix) return std::nullopt;
  LittleEndianReader in(ConstByteSpan(reinterpret_cast<const std::uint8_t*>(key.data()) + 1, 16));
  ObjectId parent;
  parent.dev = in.u64();
  parent.ino = in.u64();
  return std::pair{parent, std::string(key.substr(17))};
}

std::array<std::uint64_t, kStatFields> stat_fields(const struct stat& st) {
  const auto ns = [](const timespec& t) { return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; };
  return {st.st_dev, st.st_ino, st.st_mode, st.st_nlink, st.st_uid, st.st_gid, st.st_rdev,
          static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_blksize),
          static_cast<std::uint64_t>(st.st_blocks), ns(st.st_atim), ns(st.st_mtim), ns(st.st_ctim),
          // Room for fields a later version keeps; a record is only read by the version that wrote it.
          0, 0, 0};
}

struct stat stat_from(const std::array<std::uint64_t, kStatFields>& f) {
  const auto ts = [](std::uint64_t ns) {
    const auto signed_ns = static_cast<std::int64_t>(ns);
    return timespec{static_cast<time_t>(signed_ns / 1'000'000'000), static_cast<long>(signed_ns % 1'000'000'000)};
  };
  struct stat st {};
  st.st_dev = f[0];
  st.st_ino = f[1];
  st.st_mode = static_cast<mode_t>(f[2]);
  st.st_nlink = static_cast<nlink_t>(f[3]);
  st.st_uid = static_cast<uid_t>(f[4]);
  st.st_gid = static_cast<gid_t>(f[5]);
  st.st_rdev = f[6];
  st.st_size = static_cast<off_t>(f[7]);
  st.st_blksize = static_cast<blksize_t>(f[8]);
  st.st_blocks = static_cast<blkcnt_t>(f[9]);
  st.st_atim = ts(f[10]);
  st.st_mtim = ts(f[11]);
  st.st_ctim = ts(f[12]);
  return st;
}

std::string encode_value(std::string_view key, bool present, std::int64_t checked_ns, const struct stat& st,
                         const std::optional<DirectoryVersion>& parent_version, const HandleBytes& handle) {
  std::string value(kValueBytes + handle.size(), '\0');
  ByteSpan bytes(reinterpret_cast<std::uint8_t*>(value.data()), value.size());
  LittleEndianWriter out(bytes);
  out.u8(static_cast<std::uint8_t>((present ? kPresent : 0) | (parent_version ? kHasParentVersion : 0)));
  out.u64(static_cast<std::uint64_t>(checked_ns));
  for (std::uint64_t field : stat_fields(st)) out.u64(field);
  const DirectoryVersion version = parent_version.value_or(DirectoryVersion{});
  for (std::int64_t field : {version.mtime_ns, version.ctime_ns, version.size}) out.u64(static_cast<std::uint64_t>(field));
  out.u16(static_cast<std::uint16_t>(handle.size()));
  out.bytes(ConstByteSpan(handle.data(), handle.size()));
  out.u64(record_checksum(key, ConstByteSpan(bytes.data(), value.size() - 8)));
  return value;
}

struct DecodedValue {
  bool present = false;
  std::int64_t checked_ns = 0;
  struct stat attributes {};
  std::optional<DirectoryVersion> parent_version;
  HandleBytes handle;
};

std::optional<DecodedValue> decode_value(std::string_view key, std::string_view value) {
  if (value.size() < kValueBytes) return std::nullopt;
  ConstByteSpan bytes(reinterpret_cast<const std::uint8_t*>(value.data()), value.size());
  LittleEndianReader in(bytes);
  const std::uint8_t flags = in.u8();
  if ((flags & ~(kPresent | kHasParentVersion)) != 0) return std::nullopt;
  DecodedValue decoded;
  decoded.present = (flags & kPresent) != 0;
  decoded.checked_ns = static_cast<std::int64_t>(in.u64());
  std::array<std::uint64_t, kStatFields> fields{};
  for (std::uint64_t& field : fields) field = in.u64();
  DirectoryVersion version;
  for (std::int64_t* field : {&version.mtime_ns, &version.ctime_ns, &version.size}) *field = static_cast<std::int64_t>(in.u64());
  if ((flags & kHasParentVersion) != 0) decoded.parent_version = version;
  const std::size_t handle_size = in.u16();
  if (value.size() != kValueBytes + handle_size) return std::nullopt;
  decoded.handle.resize(handle_size);
  in.bytes(ByteSpan(decoded.handle.data(), handle_size));
  if (in.u64() != record_checksum(key, ConstByteSpan(bytes.data(), value.size() - 8))) return std::nullopt;
  if (!well_formed_handle(decoded.handle)) return std::nullopt;
  decoded.attributes = stat_from(fields);
  return decoded;
}

}  // namespace

std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

MetadataCache::MetadataCache(Options options, const std::filesystem::path& store_path, ObjectId root,
                             bool keep_stored)
    : options_(std::move(options)), store_path_(store_path) {
  if (store_path_.empty()) return;
  open_store(root, keep_stored);
  storer_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, options_.store_interval);
      lock.unlock();
      store_now();
      lock.lock();
    }
  });
}

MetadataCache::~MetadataCache() {
  if (store_path_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  storer_.join();
  store_now();
}

void MetadataCache::open_store(ObjectId root, bool keep_stored) {
  std::lock_guard storing(store_mutex_);
  auto opened = MetadataCacheStore::open(store_path_);
  if (opened.is_ok()) {
    store_ = std::move(opened.value());
    const Status loaded = load(keep_stored, root);
    if (loaded.is_ok()) return;
    opened = loaded;
    store_.reset();
  }
  // Damaged: it holds nothing the backing cannot say again.
  spdlog::warn("metadata cache: {}; starting it afresh", opened.status().message());
  std::error_code ignored;
  std::filesystem::remove_all(store_path_, ignored);
  opened = MetadataCacheStore::open(store_path_);
  if (!opened.is_ok()) {
    spdlog::warn("metadata cache: {}; it is kept in memory only", opened.status().message());
    return;
  }
  store_ = std::move(opened.value());
  if (const Status loaded = load(keep_stored, root); !loaded.is_ok()) store_.reset();
}

Status MetadataCache::load(bool keep_stored, ObjectId root) {
  // A store written on another boot may have lost unsynced removals; one written over another
  // backing root names other objects. Either way its records are not the tree's.
  const std::string header = header_value(current_boot_id(), root);
  std::optional<std::string> stored_header;
  std::vector<std::pair<std::string, std::string>> records;
  Status read = store_->for_each([&](std::string_view key, std::string_view value) {
    if (key == kHeaderKey) {
      stored_header = std::string(value);
    } else {
      records.emplace_back(key, value);
    }
  });
  // Records it could not read could not be removed either: the store goes whole.
  if (!read.is_ok()) return read;
  const bool usable = keep_stored && stored_header == header;
  std::vector<MetadataCacheStore::Change> changes;
  timespec now_ts{};
  ::clock_gettime(CLOCK_REALTIME, &now_ts);
  const std::int64_t now = ns_of(now_ts);
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, value] : records) {
      if (!key.empty() && key[0] == kListingPrefix) {
        auto dir = usable ? decode_listing_key(key) : std::nullopt;
        auto listing = dir ? decode_listing(key, value) : std::nullopt;
        if (usable && !listing) ++counts_.damaged_records;
        if (listing && options_.max_entries != 0 && listed_names_ + listing->entries.size() <= options_.max_entries) {
          put_listing_locked(*dir, std::make_shared<const DirectoryListing>(std::move(*listing)), false);
          ++counts_.listings_loaded;
          continue;
        }
        changes.push_back({key, std::nullopt});
        continue;
      }
      auto name = usable ? decode_key(key) : std::nullopt;
      auto decoded = name ? decode_value(key, value) : std::nullopt;
      if (usable && !decoded) ++counts_.damaged_records;
      if (decoded && entries_.size() < options_.max_entries) {
        // Kept while it holds by the model this mount runs, not the one it was written under;
        // past that, while its directory's version may still vouch for it (find_expired).
        put_locked(Key{name->first, name->second},
                   Entry{decoded->present, decoded->attributes, decoded->checked_ns, 0, false, true,
                         decoded->parent_version, std::move(decoded->handle)},
                   stamp());
        auto it = entries_.find(Key{name->first, name->second});
        if (it != entries_.end() && (it->second.expires_ns > now || it->second.parent_version)) {
          ++counts_.loaded;
          continue;
        }
        if (it != entries_.end()) {
          std::vector<MetadataCacheStore::Change> removed_below;  // the key is removed below
          erase_locked(it, removed_below);
        }
      }
      changes.push_back({key, std::nullopt});
    }
  }
  if (counts_.damaged_records != 0) spdlog::warn("metadata cache: {} damaged records dropped", counts_.damaged_records);
  changes.push_back({kHeaderKey, header});
  apply_locked(changes);
  return Status::ok();
}

std::optional<MetadataCache::Answer> MetadataCache::find(ObjectId parent, std::string_view name, std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(Key{parent, std::string(name)});
  // A clock set back makes every answer's age unknown: it is asked again.
  if (it == entries_.end() || now_ns >= it->second.expires_ns || now_ns < it->second.checked_ns) {
    ++counts_.misses;
    return std::nullopt;
  }
  ++counts_.hits;
  return Answer{it->second.present, it->second.attributes, 1e-9 * static_cast<double>(it->second.expires_ns - now_ns),
                it->second.handle};
}

void MetadataCache::record(ObjectId parent, std::string_view name, const struct stat& attributes,
                           std::int64_t checked_ns, std::uint64_t stamp, std::optional<DirectoryVersion> parent_version,
                           HandleBytes handle) {
  record(Key{parent, std::string(name)},
         Entry{true, attributes, checked_ns, 0, true, false, parent_version, std::move(handle)}, stamp);
}

void MetadataCache::record_missing(ObjectId parent, std::string_view name, std::int64_t checked_ns,
                                   std::uint64_t stamp, std::optional<DirectoryVersion> parent_version) {
  record(Key{parent, std::string(name)}, Entry{false, {}, checked_ns, 0, true, false, parent_version, {}}, stamp);
}

std::optional<MetadataCache::Expired> MetadataCache::find_expired(ObjectId parent, std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(Key{parent, std::string(name)});
  if (it == entries_.end() || !it->second.parent_version) return std::nullopt;
  return Expired{Answer{it->second.present, it->second.attributes, 0.0, it->second.handle}, *it->second.parent_version};
}

void MetadataCache::count_vouched() {
  std::lock_guard lock(mutex_);
  ++counts_.names_vouched;
}

void MetadataCache::record(Key key, Entry entry, std::uint64_t stamp) {
  {
    std::lock_guard lock(mutex_);
    if (entries_.size() < options_.max_entries || entries_.contains(key))
      return put_locked(std::move(key), std::move(entry), stamp);
  }
  // Full: the records evicted leave the store before anything else is written to it, so that a
  // change that no longer finds them in memory cannot be acknowledged while the store has them.
  std::lock_guard storing(store_mutex_);
  std::vector<MetadataCacheStore::Change> removed;
  {
    std::lock_guard lock(mutex_);
    if (entries_.size() >= options_.max_entries) evict_locked(removed);
    put_locked(std::move(key), std::move(entry), stamp);
  }
  if (!removed.empty()) apply_locked(removed);
}

void MetadataCache::put_locked(Key key, Entry entry, std::uint64_t stamp) {
  if (options_.max_entries == 0) return;
  if (stamp != changes_.load(std::memory_order_acquire)) {
    ++counts_.voided_records;
    return;
  }
  const std::int64_t changed_ns = std::max(ns_of(entry.attributes.st_mtim), ns_of(entry.attributes.st_ctim));
  const double age = entry.present ? 1e-9 * static_cast<double>(entry.checked_ns - changed_ns) : 0.0;
  const double bound = options_.bound(std::max(age, 0.0));
  if (bound <= 0) return;
  entry.expires_ns = entry.checked_ns + static_cast<std::int64_t>(bound * 1e9);
  if (auto old = entries_.find(key); old != entries_.end()) {
    // Replaced in place: a stored record is overwritten by the next store, not removed.
    entry.stored = old->second.stored;
    std::vector<MetadataCacheStore::Change> overwritten;
    erase_locked(old, overwritten);
  }
  auto [it, inserted] = entries_.emplace(std::move(key), std::move(entry));
  if (it->second.present) {
    const ObjectId object = object_of(it->second.attributes);
    names_of_[object].push_back(&it->first);
    if (!S_ISDIR(it->second.attributes.st_mode) && it->second.attributes.st_nlink > 1) multi_linked_.insert(object);
  }
  if (it->second.unstored && !store_path_.empty()) unstored_.push_back(it->first);
}

void MetadataCache::erase_locked(Entries::iterator it, std::vector<MetadataCacheStore::Change>& removed_from_store) {
  if (it->second.present) {
    const ObjectId object = object_of(it->second.attributes);
    auto names = names_of_.find(object);
    if (names != names_of_.end()) {
      auto& keys = names->second;
      keys.erase(std::remove(keys.begin(), keys.end(), &it->first), keys.end());
      if (names->second.empty()) {
        names_of_.erase(names);
        multi_linked_.erase(object);
      }
    }
  }
  if (it->second.stored) removed_from_store.push_back({encode_key(it->first.parent, it->first.name), std::nullopt});
  entries_.erase(it);
}

void MetadataCache::evict_locked(std::vector<MetadataCacheStore::Change>& removed_from_store) {
  // An arbitrary sixteenth (the hash order) makes room at once for many records to come.
  std::size_t to_evict = std::max<std::size_t>(1, options_.max_entries / 16);
  while (to_evict-- > 0 && !entries_.empty()) {
    erase_locked(entries_.begin(), removed_from_store);
    ++counts_.evictions;
  }
}

std::shared_ptr<const DirectoryListing> MetadataCache::find_listing(ObjectId dir, const DirectoryVersion& version) {
  std::lock_guard lock(mutex_);
  auto it = listings_.find(dir);
  if (it == listings_.end() || it->second.listing->version != version) {
    ++counts_.listing_misses;
    return nullptr;
  }
  ++counts_.listing_hits;
  return it->second.listing;
}

void MetadataCache::record_listing(ObjectId dir, DirectoryListing listing, std::uint64_t stamp) {
  std::lock_guard lock(mutex_);
  if (options_.max_entries == 0 || listing.entries.size() > options_.max_entries) return;
  if (stamp != changes_.load(std::memory_order_acquire)) {
    ++counts_.voided_records;
    return;
  }
  ++counts_.listings_recorded;
  put_listing_locked(dir, std::make_shared<const DirectoryListing>(std::move(listing)), !store_path_.empty());
  evict_listings_locked();
}

void MetadataCache::put_listing_locked(ObjectId dir, std::shared_ptr<const DirectoryListing> listing, bool unstored) {
  KeptListing& kept = listings_[dir];
  if (kept.listing != nullptr) listed_names_ -= kept.listing->entries.size();
  listed_names_ += listing->entries.size();
  kept.listing = std::move(listing);
  if (unstored && !kept.unstored) unstored_listings_.push_back(dir);
  kept.unstored = kept.unstored || unstored;
}

void MetadataCache::drop_listing_locked(ObjectId dir, std::vector<MetadataCacheStore::Change>& removed_from_store) {
  auto it = listings_.find(dir);
  if (it == listings_.end()) return;
  listed_names_ -= it->second.listing->entries.size();
  listings_.erase(it);
  if (!store_path_.empty()) removed_from_store.push_back({encode_listing_key(dir), std::nullopt});
}

void MetadataCache::evict_listings_locked() {
  if (listed_names_ <= options_.max_entries) return;
  // As for names: an arbitrary sixteenth more than needed, so that the next listings fit.
  const std::size_t target = options_.max_entries - options_.max_entries / 16;
  while (listed_names_ > target && !listings_.empty()) {
    auto it = listings_.begin();
    listed_names_ -= it->second.listing->entries.size();
    if (!store_path_.empty()) listings_to_unstore_.push_back(it->first);
    listings_.erase(it);
    ++counts_.evictions;
  }
}

void MetadataCache::name_changed(ObjectId parent, std::string_view name) {
  std::vector<MetadataCacheStore::Change> removed;
  {
    std::lock_guard lock(mutex_);
    changes_.fetch_add(1, std::memory_order_acq_rel);
    drop_listing_locked(parent, removed);
    auto it = entries_.find(Key{parent, std::string(name)});
    if (it != entries_.end() && it->second.present) {
      object_changed_locked(object_of(it->second.attributes), removed);
    } else {
      if (it != entries_.end()) erase_locked(it, removed), ++counts_.invalidations;
      // The name removed may have been another name of an object with several: their link
      // counts are unknown now.
      const std::vector<ObjectId> linked(multi_linked_.begin(), multi_linked_.end());
      for (ObjectId object : linked) object_changed_locked(object, removed);
    }
  }
  remove_from_store(removed);
}

void MetadataCache::object_changed(ObjectId object) {
  std::vector<MetadataCacheStore::Change> removed;
  {
    std::lock_guard lock(mutex_);
    changes_.fetch_add(1, std::memory_order_acq_rel);
    object_changed_locked(object, removed);
  }
  remove_from_store(removed);
}

void MetadataCache::object_changed_locked(ObjectId object, std::vector<MetadataCacheStore::Change>& removed_from_store) {
  auto names = names_of_.find(object);
  if (names == names_of_.end()) return;
  const auto keys = names->second;  // erase_locked edits the list
  for (const Key* key : keys) {
    erase_locked(entries_.find(*key), removed_from_store);
    ++counts_.invalidations;
  }
}

void MetadataCache::remove_from_store(const std::vector<MetadataCacheStore::Change>& removals) {
  if (removals.empty()) return;
  std::lock_guard storing(store_mutex_);
  apply_locked(removals);
}

void MetadataCache::store_now() {
  std::lock_guard storing(store_mutex_);
  std::vector<MetadataCacheStore::Change> changes;
  {
    std::lock_guard lock(mutex_);
    for (const Key& key : unstored_) {
      auto it = entries_.find(key);
      if (it == entries_.end() || !it->second.unstored) continue;
      const std::string encoded = encode_key(key.parent, key.name);
      changes.push_back({encoded, encode_value(encoded, it->second.present, it->second.checked_ns, it->second.attributes,
                                                   it->second.parent_version, it->second.handle)});
      it->second.unstored = false;
      it->second.stored = true;
    }
    unstored_.clear();
    for (ObjectId dir : listings_to_unstore_) {
      if (!listings_.contains(dir)) changes.push_back({encode_listing_key(dir), std::nullopt});
    }
    listings_to_unstore_.clear();
    for (ObjectId dir : unstored_listings_) {
      auto it = listings_.find(dir);
      if (it == listings_.end() || !it->second.unstored) continue;
      const std::string key = encode_listing_key(dir);
      changes.push_back({key, encode_listing(key, *it->second.listing)});
      it->second.unstored = false;
    }
    unstored_listings_.clear();
  }
  if (!changes.empty()) apply_locked(changes);
}

void MetadataCache::apply_locked(const std::vector<MetadataCacheStore::Change>& changes) {
  if (store_ == nullptr) return;
  const Status status = store_->apply(changes);
  if (status.is_ok()) return;
  spdlog::warn("metadata cache: {}; it is removed and kept in memory only from now on", status.message());
  store_.reset();
  std::error_code error;
  std::filesystem::remove_all(store_path_, error);
  if (error)
    spdlog::error("metadata cache: cannot remove {} ({}): remove it before the next mount", store_path_.string(),
                  error.message());
  std::lock_guard lock(mutex_);
  ++counts_.store_errors;
}

MetadataCache::Counts MetadataCache::counts() const {
  std::lock_guard lock(mutex_);
  Counts counts = counts_;
  counts.entries = entries_.size();
  counts.listings = listings_.size();
  counts.listed_names = listed_names_;
  return counts;
}

}  // namespace flashdir::fs
