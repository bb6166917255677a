// The daemon's metadata cache: answers held within their bound and no longer, changes through
// the mount removing what they make untrue (also from the store, as a crash right after them
// finds it), and what a restart may and may not load.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>

#include "flashdir/metadata_cache_store.h"
#include "fs/directory_listing.h"
#include "fs/metadata_cache.h"
#include "support/temp_dir.h"

using namespace flashdir;
using namespace flashdir::fs;
using flashdir::testing::TempDir;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr ObjectId kRoot{7, 2};

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<std::int64_t>(t.tv_sec) * kSecond + t.tv_nsec;
}

// A file `ino` on the root's device, last changed `age_seconds` before `at_ns`.
struct stat file(std::uint64_t ino, std::int64_t at_ns, double age_seconds = 1000, nlink_t links = 1) {
  struct stat st {};
  st.st_dev = kRoot.dev;
  st.st_ino = ino;
  st.st_mode = S_IFREG | 0644;
  st.st_nlink = links;
  st.st_size = static_cast<off_t>(ino * 10);
  const std::int64_t changed = at_ns - static_cast<std::int64_t>(age_seconds * 1e9);
  st.st_mtim = st.st_ctim = timespec{static_cast<time_t>(changed / kSecond), static_cast<long>(changed % kSecond)};
  return st;
}

MetadataCache::Options options(double bound_seconds, std::size_t max_entries = 1000) {
  MetadataCache::Options o;
  o.max_entries = max_entries;
  o.bound = [bound_seconds](double) { return bound_seconds; };
  o.store_interval = std::chrono::hours(1);  // stored by store_now() or the destructor only
  return o;
}

std::unique_ptr<MetadataCache> in_memory(double bound_seconds, std::size_t max_entries = 1000) {
  return std::make_unique<MetadataCache>(options(bound_seconds, max_entries), std::filesystem::path(), kRoot, true);
}

}  // namespace

TEST_CASE("an answer holds for its bound and no longer") {
  auto cache = in_memory(10);
  const std::int64_t t = now_ns();
  cache->record(kRoot, "a", file(11, t), t, cache->stamp());
  cache->record_missing(kRoot, "gone", t, cache->stamp());
  auto a = cache->find(kRoot, "a", t + 9 * kSecond);
  REQUIRE(a);
  CHECK(a->present);
  CHECK(a->attributes.st_ino == 11);
  CHECK(a->seconds_left == Approx(1.0));
  auto gone = cache->find(kRoot, "gone", t + kSecond);
  REQUIRE(gone);
  CHECK_FALSE(gone->present);
  CHECK_FALSE(cache->find(kRoot, "a", t + 10 * kSecond));
  CHECK_FALSE(cache->find(kRoot, "other", t));
  // A clock set back makes the answer's age unknown.
  CHECK_FALSE(cache->find(kRoot, "a", t - kSecond));
}

TEST_CASE("the bound follows the age the object had when the backing answered") {
  MetadataCache::Options o = options(0);
  o.bound = [](double age) { return std::clamp(age / 10, 3.0, 60.0); };
  MetadataCache cache(o, std::filesystem::path(), kRoot, true);
  const std::int64_t t = now_ns();
  cache.record(kRoot, "old", file(1, t, 1000), t, cache.stamp());
  cache.record(kRoot, "new", file(2, t, 1), t, cache.stamp());
  cache.record_missing(kRoot, "missing", t, cache.stamp());
  CHECK(cache.find(kRoot, "old", t + 59 * kSecond));
  CHECK_FALSE(cache.find(kRoot, "new", t + 4 * kSecond));
  CHECK(cache.find(kRoot, "new", t + 2 * kSecond));
  CHECK_FALSE(cache.find(kRoot, "missing", t + 4 * kSecond));
}

TEST_CASE("an answer a change overtook is not kept") {
  auto cache = in_memory(10);
  const std::int64_t t = now_ns();
  const std::uint64_t stamp = cache->stamp();  // a lookup starts asking the backing
  cache->object_changed({kRoot.dev, 99});      // a change through the mount, to anything
  cache->record(kRoot, "a", file(11, t), t, stamp);
  CHECK_FALSE(cache->find(kRoot, "a", t));
  CHECK(cache->counts().voided_records == 1);
  cache->record(kRoot, "a", file(11, t), t, cache->stamp());
  CHECK(cache->find(kRoot, "a", t));
}

TEST_CASE("a change through the mount removes every answer it makes untrue") {
  auto cache = in_memory(10);
  const std::int64_t t = now_ns();
  const ObjectId dir{kRoot.dev, 5};
  cache->record(kRoot, "a", file(11, t, 1000, 2), t, cache->stamp());
  cache->record(dir, "a-link", file(11, t, 1000, 2), t, cache->stamp());
  cache->record(kRoot, "b", file(12, t), t, cache->stamp());
  cache->record(kRoot, "c", file(13, t), t, cache->stamp());
  cache->record_missing(kRoot, "d", t, cache->stamp());

  SECTION("the attributes of an object: each of its names") {
    cache->object_changed({kRoot.dev, 11});
    CHECK_FALSE(cache->find(kRoot, "a", t));
    CHECK_FALSE(cache->find(dir, "a-link", t));
    CHECK(cache->find(kRoot, "b", t));
  }
  SECTION("a name removed: the object it named loses its other names too (their link count)") {
    cache->name_changed(kRoot, "a");
    CHECK_FALSE(cache->find(kRoot, "a", t));
    CHECK_FALSE(cache->find(dir, "a-link", t));
    CHECK(cache->find(kRoot, "b", t));
  }
  SECTION("a name made where one was missing") {
    cache->name_changed(kRoot, "d");
    CHECK_FALSE(cache->find(kRoot, "d", t));
    CHECK(cache->find(kRoot, "b", t));
  }
  SECTION("a name the cache does not know removed: it may have been a name of an object with several") {
    cache->name_changed(kRoot, "unknown");
    CHECK_FALSE(cache->find(kRoot, "a", t));
    CHECK_FALSE(cache->find(dir, "a-link", t));
    CHECK(cache->find(kRoot, "b", t));
    CHECK(cache->find(kRoot, "c", t));
  }
}

TEST_CASE("the cache holds at most max_entries names") {
  auto cache = in_memory(10, 64);
  const std::int64_t t = now_ns();
  for (std::uint64_t i = 0; i < 1000; ++i) cache->record(kRoot, "f" + std::to_string(i), file(100 + i, t), t, cache->stamp());
  CHECK(cache->counts().entries <= 64);
  CHECK(cache->counts().evictions >= 1000 - 64);
  CHECK(cache->find(kRoot, "f999", t));  // the newest is always kept
}

TEST_CASE("answers are kept across a restart on the same boot over the same root") {
  TempDir temp;
  const auto path = temp / "names";
  const std::int64_t t = now_ns();
  {
    MetadataCache cache(options(60), path, kRoot, true);
    cache.record(kRoot, "a", file(11, t), t, cache.stamp());
    cache.record(kRoot, "b", file(12, t), t, cache.stamp());
    cache.record_missing(kRoot, "m", t, cache.stamp());
  }  // stored by the destructor

  SECTION("loaded") {
    MetadataCache cache(options(60), path, kRoot, true);
    CHECK(cache.counts().loaded == 3);
    auto a = cache.find(kRoot, "a", now_ns());
    REQUIRE(a);
    CHECK(a->attributes.st_ino == 11);
    CHECK(a->attributes.st_size == 110);
    CHECK(a->attributes.st_mtim.tv_sec == file(11, t).st_mtim.tv_sec);
    auto m = cache.find(kRoot, "m", now_ns());
    REQUIRE(m);
    CHECK_FALSE(m->present);
  }
  SECTION("dropped when asked to (a restart wrote data back)") {
    { MetadataCache cache(options(60), path, kRoot, false); }
    MetadataCache cache(options(60), path, kRoot, true);
    CHECK(cache.counts().loaded == 0);
    CHECK_FALSE(cache.find(kRoot, "a", now_ns()));
  }
  SECTION("dropped over another backing root") {
    MetadataCache cache(options(60), path, ObjectId{8, 2}, true);
    CHECK(cache.counts().loaded == 0);
    CHECK_FALSE(cache.find(kRoot, "a", now_ns()));
  }
  SECTION("held only as long as the model of this mount allows") {
    // Stored under a 60 s bound; this mount's bound is shorter than the answers' age.
    MetadataCache::Options shorter = options(0);
    shorter.bound = [](double) { return 1e-6; };
    { MetadataCache cache(shorter, path, kRoot, true); CHECK(cache.counts().loaded == 0); }
    MetadataCache cache(options(60), path, kRoot, true);
    CHECK(cache.counts().loaded == 0);  // and removed from the store by the load
  }
  SECTION("none under a mount that keeps nothing, and none after it") {
    { MetadataCache cache(options(60, 0), path, kRoot, true); CHECK(cache.counts().loaded == 0); }
    MetadataCache cache(options(60), path, kRoot, true);
    CHECK(cache.counts().loaded == 0);
  }
}

TEST_CASE("a change through the mount leaves the store at once: a crash right after it does not bring the answer back") {
  TempDir temp;
  const auto path = temp / "names";
  const std::int64_t t = now_ns();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The daemon: answers stored, then changes through the mount, then killed (no destructor).
    auto* cache = new MetadataCache(options(60), path, kRoot, true);
    cache->record(kRoot, "renamed", file(11, t), t, cache->stamp());
    cache->record(kRoot, "chmodded", file(12, t), t, cache->stamp());
    cache->record(kRoot, "kept", file(13, t), t, cache->stamp());
    cache->record_missing(kRoot, "created", t, cache->stamp());
    cache->store_now();
    cache->name_changed(kRoot, "renamed");
    cache->object_changed({kRoot.dev, 12});
    cache->name_changed(kRoot, "created");
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);  // the child ran (ThreadSanitizer refuses a child's threads)
  MetadataCache cache(options(60), path, kRoot, true);
  const std::int64_t now = now_ns();
  CHECK_FALSE(cache.find(kRoot, "renamed", now));
  CHECK_FALSE(cache.find(kRoot, "chmodded", now));
  CHECK_FALSE(cache.find(kRoot, "created", now));
  CHECK(cache.find(kRoot, "kept", now));
  CHECK(cache.counts().loaded == 1);
}

TEST_CASE("a damaged record is dropped, never served") {
  TempDir temp;
  const auto path = temp / "names";
  const std::int64_t t = now_ns();
  { MetadataCache cache(options(60), path, kRoot, true); cache.record(kRoot, "a", file(11, t), t, cache.stamp()); cache.record(kRoot, "b", file(12, t), t, cache.stamp()); }
  {
    auto store = MetadataCacheStore::open(path);
    REQUIRE(store.is_ok());
    std::vector<std::pair<std::string, std::string>> records;
    REQUIRE(store.value()->for_each([&](std::string_view key, std::string_view value) {
      records.emplace_back(key, value);
    }).is_ok());
    std::vector<MetadataCacheStore::Change> changes;
    for (auto& [key, value] : records) {
      if (key.size() <= 1 || key.substr(17) != "a") continue;
      value[9 + 7 * 8] ^= 0x01;  // one bit of the size (after present, the time, six fields)
      changes.push_back({key, value});
    }
    REQUIRE(changes.size() == 1);
    REQUIRE(store.value()->apply(changes).is_ok());
  }
  MetadataCache cache(options(60), path, kRoot, true);
  CHECK(cache.counts().damaged_records == 1);
  CHECK_FALSE(cache.find(kRoot, "a", now_ns()));
  CHECK(cache.find(kRoot, "b", now_ns()));
}

namespace {

// A struct file_handle's bytes as name_to_handle_at writes them: `payload` after the header.
HandleBytes handle_with(std::vector<unsigned char> payload) {
  struct file_handle header {};
  header.handle_bytes = static_cast<unsigned>(payload.size());
  header.handle_type = 1;
  HandleBytes bytes(sizeof header + payload.size());
  std::memcpy(bytes.data(), &header, sizeof header);
  std::copy(payload.begin(), payload.end(), bytes.begin() + sizeof header);
  return bytes;
}

}  // namespace

TEST_CASE("an answer's file handle is kept across a restart, and an ill-formed one is dropped, never served") {
  TempDir temp;
  const auto path = temp / "names";
  const std::int64_t t = now_ns();
  const HandleBytes handle = handle_with({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  {
    MetadataCache cache(options(60), path, kRoot, true);
    cache.record(kRoot, "with", file(11, t), t, cache.stamp(), std::nullopt, handle);
    cache.record(kRoot, "without", file(12, t), t, cache.stamp());
    // Its header says 12 bytes follow, and 4 do.
    HandleBytes torn = handle;
    torn.resize(handle.size() - 8);
    cache.record(kRoot, "torn", file(13, t), t, cache.stamp(), std::nullopt, torn);
    auto answer = cache.find(kRoot, "with", t);
    REQUIRE(answer);
    CHECK(answer->handle == handle);
  }
  MetadataCache cache(options(60), path, kRoot, true);
  auto with = cache.find(kRoot, "with", now_ns());
  REQUIRE(with);
  CHECK(with->handle == handle);
  auto without = cache.find(kRoot, "without", now_ns());
  REQUIRE(without);
  CHECK(without->handle.empty());
  CHECK_FALSE(cache.find(kRoot, "torn", now_ns()));
  CHECK(cache.counts().damaged_records == 1);
}

TEST_CASE("a store that cannot be opened is started afresh") {
  TempDir temp;
  const auto path = temp / "names";
  std::filesystem::create_directories(path);
  { std::ofstream(path / "CURRENT") << "garbage\n"; }
  MetadataCache cache(options(60), path, kRoot, true);
  const std::int64_t t = now_ns();
  cache.record(kRoot, "a", file(11, t), t, cache.stamp());
  cache.store_now();
  CHECK(cache.counts().store_errors == 0);
  CHECK(cache.find(kRoot, "a", t));
}

namespace {

DirectoryListing listing_of(std::int64_t changed_ns, std::vector<std::string> names) {
  DirectoryListing listing;
  listing.version = {changed_ns, changed_ns, static_cast<std::int64_t>(names.size()) * 32};
  std::uint64_t ino = 100;
  for (auto& name : names) listing.entries.push_back({std::move(name), ino++, DT_REG});
  return listing;
}

}  // namespace

TEST_CASE("a listing is served for the directory's version it was read at, and no other") {
  auto cache = in_memory(60);
  const std::int64_t t = now_ns() - 10 * kSecond;
  const ObjectId dir{kRoot.dev, 30};
  cache->record_listing(dir, listing_of(t, {"a", "b", "c"}), cache->stamp());
  const auto kept = cache->find_listing(dir, listing_of(t, {"a", "b", "c"}).version);
  REQUIRE(kept != nullptr);
  CHECK(kept->entries == listing_of(t, {"a", "b", "c"}).entries);
  DirectoryVersion changed = kept->version;
  for (auto* field : {&changed.mtime_ns, &changed.ctime_ns, &changed.size}) {
    const std::int64_t was = *field;
    *field += 1;
    CHECK(cache->find_listing(dir, changed) == nullptr);
    *field = was;
  }
  CHECK(cache->find_listing(ObjectId{kRoot.dev, 31}, kept->version) == nullptr);
  // A newer listing of the directory replaces the older one.
  cache->record_listing(dir, listing_of(t + kSecond, {"a"}), cache->stamp());
  CHECK(cache->find_listing(dir, kept->version) == nullptr);
  CHECK(cache->counts().listings == 1);
  CHECK(cache->counts().listed_names == 1);
  CHECK(cache->counts().listing_hits == 1);
}

TEST_CASE("a directory's version stands only once it is unchanged for a while before its stat") {
  // A change in the same clock tick as the directory's last one would leave its times as they
  // were: the listing read before it would be served after it.
  const std::int64_t stat_ns = now_ns();
  const std::int64_t racy = static_cast<std::int64_t>(kRacyChangeSeconds * 1e9);
  CHECK(version_is_settled(DirectoryVersion{stat_ns - racy, stat_ns - racy, 0}, stat_ns));
  CHECK_FALSE(version_is_settled(DirectoryVersion{stat_ns - racy + 1, stat_ns - racy, 0}, stat_ns));
  CHECK_FALSE(version_is_settled(DirectoryVersion{stat_ns - racy, stat_ns - racy + 1, 0}, stat_ns));
  CHECK_FALSE(version_is_settled(DirectoryVersion{stat_ns + kSecond, stat_ns - racy, 0}, stat_ns));
}

TEST_CASE("an answer past its bound is handed back with the directory version it was asked under") {
  auto cache = in_memory(10);
  const std::int64_t t = now_ns();
  const DirectoryVersion version{t - 100 * kSecond, t - 100 * kSecond, 4096};
  cache->record(kRoot, "a", file(11, t), t, cache->stamp(), version);
  cache->record_missing(kRoot, "gone", t, cache->stamp(), version);
  cache->record(kRoot, "unvouched", file(12, t), t, cache->stamp());
  CHECK_FALSE(cache->find(kRoot, "a", t + 11 * kSecond));  // past the bound

  auto a = cache->find_expired(kRoot, "a");
  REQUIRE(a);
  CHECK(a->answer.present);
  CHECK(a->answer.attributes.st_ino == 11);
  CHECK(a->parent_version == version);
  auto gone = cache->find_expired(kRoot, "gone");
  REQUIRE(gone);
  CHECK_FALSE(gone->answer.present);
  CHECK(gone->parent_version == version);
  // Asked without a settled version of its directory: nothing can vouch for it.
  CHECK_FALSE(cache->find_expired(kRoot, "unvouched"));
  CHECK_FALSE(cache->find_expired(kRoot, "never asked"));
  // A change of the name through the mount removes the answer, the directory's version with it.
  cache->name_changed(kRoot, "a");
  CHECK_FALSE(cache->find_expired(kRoot, "a"));
  // A restart keeps the answers with their directories' versions, also those past their bound;
  // one without a version goes once past its bound.
  TempDir temp;
  const std::int64_t long_ago = t - 100 * kSecond;
  {
    MetadataCache stored(options(60), temp / "names", kRoot, true);
    stored.record(kRoot, "b", file(13, t), t, stored.stamp(), version);
    stored.record(kRoot, "expired", file(14, long_ago), long_ago, stored.stamp(), version);
    stored.record_missing(kRoot, "expired missing", long_ago, stored.stamp(), version);
    stored.record(kRoot, "expired unvouched", file(15, long_ago), long_ago, stored.stamp());
  }
  MetadataCache restarted(options(60), temp / "names", kRoot, true);
  CHECK(restarted.find(kRoot, "b", now_ns()));
  auto b = restarted.find_expired(kRoot, "b");
  REQUIRE(b);
  CHECK(b->parent_version == version);
  CHECK_FALSE(restarted.find(kRoot, "expired", now_ns()));
  auto expired = restarted.find_expired(kRoot, "expired");
  REQUIRE(expired);
  CHECK(expired->answer.attributes.st_ino == 14);
  CHECK(expired->parent_version == version);
  auto expired_missing = restarted.find_expired(kRoot, "expired missing");
  REQUIRE(expired_missing);
  CHECK_FALSE(expired_missing->answer.present);
  CHECK_FALSE(restarted.find_expired(kRoot, "expired unvouched"));
  cache->count_vouched();
  CHECK(cache->counts().names_vouched == 1);
}

TEST_CASE("listings count against max_entries by their names") {
  auto cache = in_memory(60, 32);
  const std::int64_t t = now_ns() - 10 * kSecond;
  for (std::uint64_t d = 0; d < 20; ++d) cache->record_listing(ObjectId{kRoot.dev, 1000 + d}, listing_of(t, {"x", "y", "z"}), cache->stamp());
  CHECK(cache->counts().listed_names <= 32);
  CHECK(cache->counts().listings >= 8);
  CHECK(cache->counts().evictions > 0);
  cache->record_listing(ObjectId{kRoot.dev, 5000}, listing_of(t, std::vector<std::string>(33, "n")), cache->stamp());
  CHECK(cache->find_listing(ObjectId{kRoot.dev, 5000}, listing_of(t, {}).version) == nullptr);
  auto none = in_memory(60, 0);
  none->record_listing(ObjectId{kRoot.dev, 1}, listing_of(t, {}), none->stamp());
  CHECK(none->counts().listings == 0);
}

TEST_CASE("listings are kept across a restart, and a damaged one is dropped, never served") {
  TempDir temp;
  const auto path = temp / "names";
  const std::int64_t t = now_ns() - 10 * kSecond;
  const ObjectId first{kRoot.dev, 40}, second{kRoot.dev, 41};
  const std::vector<std::string> names{"one", "two", std::string(255, 'l')};
  {
    MetadataCache cache(options(60), path, kRoot, true);
    cache.record_listing(first, listing_of(t, names), cache.stamp());
    cache.record_listing(second, listing_of(t, {"x"}), cache.stamp());
  }
  {
    MetadataCache cache(options(60), path, kRoot, true);
    CHECK(cache.counts().listings_loaded == 2);
    const auto kept = cache.find_listing(first, listing_of(t, names).version);
    REQUIRE(kept != nullptr);
    CHECK(kept->entries == listing_of(t, names).entries);
  }
  {
    auto store = MetadataCacheStore::open(path);
    REQUIRE(store.is_ok());
    std::vector<MetadataCacheStore::Change> changes;
    REQUIRE(store.value()->for_each([&](std::string_view key, std::string_view value) {
      if (key.size() != 17 || key[0] != 'l' || key[9] != 40) return;
      std::string damaged(value);
      damaged[4 * 8 + 8 + 1 + 2] ^= 0x20;  // a letter of the first name
      changes.push_back({std::string(key), damaged});
    }).is_ok());
    REQUIRE(changes.size() == 1);
    REQUIRE(store.value()->apply(changes).is_ok());
  }
  {
    MetadataCache cache(options(60), path, kRoot, true);
    CHECK(cache.counts().damaged_records == 1);
    CHECK(cache.find_listing(first, listing_of(t, names).version) == nullptr);
    CHECK(cache.find_listing(second, listing_of(t, {"x"}).version) != nullptr);
  }
  // A store written over another root is dropped whole, listings with the names.
  MetadataCache other_root(options(60), path, ObjectId{8, 2}, true);
  CHECK(other_root.counts().listings_loaded == 0);
  CHECK(other_root.counts().store_errors == 0);
}

TEST_CASE("a listing record decodes to what was encoded, and nothing else does") {
  const DirectoryListing listing = listing_of(123456789, {"a", "bb", "ccc"});
  const std::string encoded = encode_listing("key", listing);
  const auto decoded = decode_listing("key", encoded);
  REQUIRE(decoded);
  CHECK(decoded->version == listing.version);
  CHECK(decoded->entries == listing.entries);
  CHECK_FALSE(decode_listing("other key", encoded));
  for (std::size_t cut : {std::size_t{0}, std::size_t{7}, encoded.size() - 1}) CHECK_FALSE(decode_listing("key", encoded.substr(0, cut)));
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    std::string flipped = encoded;
    flipped[i] ^= 0x04;
    INFO("byte " << i);
    CHECK_FALSE(decode_listing("key", flipped));
  }
  const auto empty = decode_listing("key", encode_listing("key", DirectoryListing{}));
  REQUIRE(empty);
  CHECK(empty->entries.empty());
}

TEST_CASE("a listing read while a change was made through the mount is not kept") {
  auto cache = in_memory(60);
  const std::int64_t t = now_ns() - 10 * kSecond;
  const ObjectId dir{kRoot.dev, 60};
  const std::uint64_t stamp = cache->stamp();
  cache->name_changed(dir, "made while it was read");
  cache->record_listing(dir, listing_of(t, {"a"}), stamp);
  CHECK(cache->find_listing(dir, listing_of(t, {"a"}).version) == nullptr);
  CHECK(cache->counts().voided_records == 1);
}

TEST_CASE("a name changed through the mount drops its directory's listing, from the store too") {
  // Its version would tell the next opendir as much, but not on a store that keeps no
  // directory times; and a crash right after the change must not bring the listing back.
  TempDir temp;
  const auto path = temp / "names";
  const std::int64_t t = now_ns() - 10 * kSecond;
  const ObjectId changed{kRoot.dev, 50}, other{kRoot.dev, 51};
  {
    MetadataCache cache(options(60), path, kRoot, true);
    cache.record_listing(changed, listing_of(t, {"a"}), cache.stamp());
    cache.record_listing(other, listing_of(t, {"b"}), cache.stamp());
    cache.store_now();
    cache.name_changed(changed, "made");
    CHECK(cache.find_listing(changed, listing_of(t, {"a"}).version) == nullptr);
    CHECK(cache.find_listing(other, listing_of(t, {"b"}).version) != nullptr);
    CHECK(cache.counts().listed_names == 1);
  }
  MetadataCache cache(options(60), path, kRoot, true);
  CHECK(cache.counts().listings_loaded == 1);
  CHECK(cache.find_listing(changed, listing_of(t, {"a"}).version) == nullptr);
}
