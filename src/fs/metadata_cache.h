// The daemon's own cache of the backing tree (doc/daemon.md "Metadata cache"): for each name a
// lookup asked the backing about, the object's attributes or that the name was missing, and
// when the backing said so; and directories' listings, each with the version of the directory
// it was read at (directory_listing.h). A lookup inside the consistency model's bound for that
// answer is served from here without a backing call, so a restarted daemon (whose kernel caches
// start empty) knows the tree as the kernel knew it before: the cache is kept in CACHE/metadata
// (MetadataCacheStore) and loaded at the next mount, on the same boot, over the same backing
// root. A change made through the mount removes what it makes untrue before its reply, in
// memory and in the store.
//
// Thread safety: every member function may be called from any thread. A lookup takes a stamp()
// before asking the backing and hands it to record(): a change reported meanwhile (any
// name_changed or object_changed) voids the record, so an answer older than a change is never
// kept after it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>
#include <absl/container/node_hash_map.h>

#include "flashdir/metadata_cache_store.h"
#include "fs/directory_listing.h"

namespace flashdir::fs {

// A backing object by its device and inode number.
struct ObjectId {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const ObjectId&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const ObjectId& id) {
    return H::combine(std::move(h), id.dev, id.ino);
  }
};

inline ObjectId object_of(const struct stat& st) { return {st.st_dev, st.st_ino}; }

// The bytes of a struct file_handle naming an object (name_to_handle_at); empty if none.
using HandleBytes = std::vector<unsigned char>;

class MetadataCache {
 public:
  // How long the backing's answer about an object stays true, in seconds, for an object whose
  // attributes had last changed `age_seconds` before the answer (the consistency model's bound);
  // bound(0) for a missing name.
  using Bound = std::function<double(double age_seconds)>;
  struct Options {
    std::size_t max_entries = 100'000;  // at most this many names in memory and in the store
    Bound bound;
    std::chrono::milliseconds store_interval{1000};  // new answers reach the store this often
  };
  struct Counts {
    std::uint64_t entries = 0;
    std::uint64_t loaded = 0;       // entries the store gave at the start
    std::uint64_t hits = 0;         // lookups answered without the backing
    std::uint64_t misses = 0;       // lookups that asked the backing
    std::uint64_t invalidations = 0;  // entries a change through the mount removed
    std::uint64_t evictions = 0;
    std::uint64_t voided_records = 0;  // answers a change overtook (see stamp())
    std::uint64_t damaged_records = 0;  // store records that failed their checksum (dropped)
    std::uint64_t store_errors = 0;
    std::uint64_t listings = 0;         // directories whose listing is kept
    std::uint64_t listed_names = 0;     // the names in them
    std::uint64_t listings_loaded = 0;  // listings the store gave at the start
    std::uint64_t listing_hits = 0;     // opendirs listed without reading the backing directory
    std::uint64_t listing_misses = 0;   // opendirs that read it
    std::uint64_t listings_recorded = 0;
    std::uint64_t names_vouched = 0;    // misses answered by their directory's version (find_expired)
  };

  // Kept across restarts in a MetadataCacheStore at `store_path`, unless it is empty. What the
  // store holds is loaded if it was written on this boot over the backing root `root` (its
  // device and inode), and dropped otherwise or where `keep_stored` is false (a restart that
  // wrote data back into files). A store that cannot be opened or written is removed (a full
  // disk still lets files go), and the cache goes on in memory only: a removal it failed to
  // write would otherwise let a stale answer outlive the change.
  MetadataCache(Options options, const std::filesystem::path& store_path, ObjectId root, bool keep_stored);
  // Writes what the store does not have yet.
  ~MetadataCache();

  struct Answer {
    bool present = false;     // false: the name was missing
    struct stat attributes {};  // if present
    double seconds_left = 0;  // how much longer it holds
    HandleBytes handle;       // the object's, if the lookup that answered kept it
  };
  // The answer for `name` in `parent` if it still holds at `now_ns` (CLOCK_REALTIME).
  std::optional<Answer> find(ObjectId parent, std::string_view name, std::int64_t now_ns);

  std::uint64_t stamp() const { return changes_.load(std::memory_order_acquire); }
  // What the backing said at `checked_ns` of `name` in `parent`, asked after stamp() gave `stamp`;
  // `parent_version`: the settled version (version_is_settled) a stat of `parent` gave before
  // the name was asked, if the caller had one; `handle`: the object's file handle, if the
  // caller can reopen objects by handle (a restarted daemon then opens the object by it rather
  // than by its name, InodeTable::remember_named).
  void record(ObjectId parent, std::string_view name, const struct stat& attributes, std::int64_t checked_ns,
              std::uint64_t stamp, std::optional<DirectoryVersion> parent_version = std::nullopt,
              HandleBytes handle = {});
  void record_missing(ObjectId parent, std::string_view name, std::int64_t checked_ns, std::uint64_t stamp,
                      std::optional<DirectoryVersion> parent_version = std::nullopt);

  // An answer past its bound that was recorded with its directory's version: while the
  // directory keeps that version its entries have not changed, so the name still names that
  // object (whose attributes may have changed) or is still missing. Kept across a restart with
  // the answer, also past its bound (the handle the answer kept then opens the object).
  struct Expired {
    Answer answer;  // seconds_left 0
    DirectoryVersion parent_version;
  };
  std::optional<Expired> find_expired(ObjectId parent, std::string_view name) const;
  // A miss answered through find_expired (for the counts).
  void count_vouched();

  // A change through the mount: `name` in `parent` was made, removed or replaced (the object it
  // named loses its answers under every name: its link count and change time moved; `parent`
  // loses its listing).
  void name_changed(ObjectId parent, std::string_view name);
  // The attributes of `object` changed (or may have): every name's answer for it goes.
  void object_changed(ObjectId object);

  // The listing kept of directory `dir` if the directory still has `version`. A version check
  // rather than a bound: an opendir stats the directory anyway, as close-to-open asks.
  std::shared_ptr<const DirectoryListing> find_listing(ObjectId dir, const DirectoryVersion& version);
  // A whole listing of `dir`, read from the backing after a stat that gave its version, where
  // version_is_settled allowed it, and after stamp() gave `stamp`: a change through the mount
  // meanwhile voids it, as it voids a lookup's answer. Listings count against max_entries by
  // their names.
  void record_listing(ObjectId dir, DirectoryListing listing, std::uint64_t stamp);

  // Writes what the store does not have yet (also done every store_interval by a thread).
  void store_now();
  Counts counts() const;

 private:
  struct Key {
    ObjectId parent;
    std::string name;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.parent, k.name);
    }
  };
  struct Entry {
    bool present = false;
    struct stat attributes {};
    std::int64_t checked_ns = 0;
    std::int64_t expires_ns = 0;
    bool unstored = false;  // changed since the store last got it
    bool stored = false;    // the store has (or is being given) a record of it
    std::optional<DirectoryVersion> parent_version;  // see record()
    HandleBytes handle;                              // see record()
  };
  using Entries = absl::node_hash_map<Key, Entry>;
  struct KeptListing {
    std::shared_ptr<const DirectoryListing> listing;
    bool unstored = false;
  };

  void open_store(ObjectId root, bool keep_stored);
  // Under store_mutex_: loads what the store holds (see the constructor); an error if it cannot
  // be read whole.
  Status load(bool keep_stored, ObjectId root);
  void record(Key key, Entry entry, std::uint64_t stamp);
  void put_locked(Key key, Entry entry, std::uint64_t stamp);
  // Removes the entry; a stored one's key is added to `removed_from_store`.
  void erase_locked(Entries::iterator it, std::vector<MetadataCacheStore::Change>& removed_from_store);
  void object_changed_locked(ObjectId object, std::vector<MetadataCacheStore::Change>& removed_from_store);
  void evict_locked(std::vector<MetadataCacheStore::Change>& removed_from_store);
  // Under mutex_: a listing from the store (at load) or the backing.
  void put_listing_locked(ObjectId dir, std::shared_ptr<const DirectoryListing> listing, bool unstored);
  // Under mutex_: drops the listing of `dir` (a name in it changed through the mount). Its
  // version would tell the next opendir as much, but a store that keeps no directory times
  // would not.
  void drop_listing_locked(ObjectId dir, std::vector<MetadataCacheStore::Change>& removed_from_store);
  // Under mutex_: drops listings until their names fit within max_entries.
  void evict_listings_locked();
  // Applies removals to the store before the change that caused them is acknowledged.
  void remove_from_store(const std::vector<MetadataCacheStore::Change>& removals);
  // Under store_mutex_: writes `changes`, or gives the store up.
  void apply_locked(const std::vector<MetadataCacheStore::Change>& changes);

  const Options options_;
  const std::filesystem::path store_path_;
  std::atomic<std::uint64_t> changes_{0};
  // Held while writing to the store, so that a removal is never overtaken by an older record;
  // taken before mutex_.
  std::mutex store_mutex_;
  std::unique_ptr<MetadataCacheStore> store_;  // guarded by store_mutex_; null: memory only
  mutable std::mutex mutex_;
  Entries entries_;
  // Names whose answer is each object (present answers only).
  absl::flat_hash_map<ObjectId, absl::InlinedVector<const Key*, 1>> names_of_;
  // Objects other than directories with more than one link: an unknown name removed may be one
  // of their names, and their link counts then change.
  absl::flat_hash_set<ObjectId> multi_linked_;
  std::vector<Key> unstored_;
  absl::flat_hash_map<ObjectId, KeptListing> listings_;
  std::size_t listed_names_ = 0;
  // Listings the store has and memory no longer does: removed at the next store_now (a listing
  // is served only for its directory's version, so a stale stored one is never wrong, only big).
  std::vector<ObjectId> listings_to_unstore_;
  std::vector<ObjectId> unstored_listings_;
  Counts counts_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread storer_;
};

// The id of the boot the machine is running (/proc/sys/kernel/random/boot_id): what a process
// crash keeps of unsynced writes, a new boot may not have.
std::string current_boot_id();

}  // namespace flashdir::fs
