// The catalog: a RocksDB database in DIR/catalog that maps file ids to backing files and keeps
// a copy of the superblock, the engine's options, the identity rule and the record of the
// backing directory the cache belongs to. Only src/catalog includes RocksDB headers; everything
// else sees this class. Every write is synced before it returns (the catalog is small and
// written rarely, and the cache's durability argument leans on it: a file id is durable here
// before any durable metadata entry names it, so write-back recovery can always find whose a
// dirty page is).
//
// A file is its identity, never the name it had (doc/daemon.md "File identity"): a record is
// found by its inode (the inode index) or, where the backing renumbers inodes, by its path (the
// path index). Both indexes are kept in every record's write; each names at most one record,
// and a record they no longer name (its path taken by another file, its inode renumbered) keeps
// its id, its pages and its last path as a hint for recovery until the engine forgets it.
// File ids are never reused: `meta/next_file_id` only grows.
//
// Thread-safe: RocksDB serialises its own writes; id allocation and multi-key updates take an
// internal mutex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashdir/format.h"
#include "flashdir/status.h"

namespace flashdir {

// How a cache tells files apart (doc/daemon.md "File identity"), fixed per cache in the catalog.
enum class IdentityRule : std::uint8_t {
  inode,  // the inode (device, number, birth time): renames and replacements behind the mount are seen
  path,   // the path plus owner, size and times: for backings whose inode numbers are not stable
};
std::string_view identity_rule_name(IdentityRule rule);
Result<IdentityRule> parse_identity_rule(std::string_view text);

// What stat(2) says of a backing file, as the cache records it. `device` is 0 for the backing
// root's own file system (its st_dev changes at every mount of an NFS or FUSE backing), the
// st_dev otherwise.
struct BackingAttributes {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t birth_ns = 0;  // statx birth time; 0 where the file system keeps none
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t size_bytes = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t link_count = 1;  // not recorded: 0 says the file has no name left

  bool operator==(const BackingAttributes&) const = default;

  // Every recorded field: a change to any of them means the cached pages may no longer match
  // (a same-size rewrite within one second changes mtime_ns or ctime_ns).
  bool same_file_and_contents(const BackingAttributes& other) const;
  // The same without the inode number (and device), for a backing that renumbers inodes.
  bool same_contents_and_owner(const BackingAttributes& other) const;
  // Whether both are the same inode, the birth time (where both have one) proving the number
  // was not reused.
  bool same_inode(const BackingAttributes& other) const;
  // Whether the file `now` found at this record's path is provably the file recorded, so that
  // its dirty pages may go back into it: its owner, and under the inode rule its inode.
  bool proves_same_file(const BackingAttributes& now, IdentityRule rule) const;
};

struct CatalogFile {
  std::uint64_t file_id = 0;  // never 0: ids start at 1 and are never reused
  std::string relative_path;  // relative to the backing root, no leading '/'; a hint under the inode rule
  BackingAttributes attributes;

  bool operator==(const CatalogFile&) const = default;
};

// The backing directory a cache belongs to, recorded at its first use and checked at every
// open: a cache's dirty pages go back only into the tree they came from.
struct BackingRootRecord {
  std::string path;                 // canonical path
  std::uint64_t fs_type = 0;        // statfs f_type
  std::uint64_t fs_id = 0;          // statfs f_fsid (0 where the file system gives none)
  std::uint64_t root_inode = 0;
  std::int64_t root_birth_ns = 0;   // 0 where the file system keeps none

  bool operator==(const BackingRootRecord&) const = default;
  // Empty if `now` is the same directory; else what differs, for a message.
  std::string differences(const BackingRootRecord& now) const;
};

class Catalog {
 public:
  enum class Access { read_only, read_write };

  // The layout of the records (meta/catalog_format); an older catalog is refused at open.
  static constexpr std::uint32_t kFormat = 2;

  // Creates an empty catalog; refused if one exists at `path`.
  static Result<std::unique_ptr<Catalog>> create(const std::filesystem::path& path);
  // A catalog RocksDB cannot read (damaged files, a bad record) is a corruption error naming
  // the catalog; one of another format is refused with invalid_argument.
  static Result<std::unique_ptr<Catalog>> open(const std::filesystem::path& path, Access access);
  ~Catalog();

  Status put_superblock_copy(const format::Superblock& superblock);
  // not_found if the catalog has no copy; corruption if the copy fails its checks.
  Result<format::Superblock> superblock_copy() const;

  // The engine's options as text (JSON), kept so that a reopen can tell what the cache was
  // used with; not_found before the first put.
  Status put_options_text(std::string_view text);
  Result<std::string> options_text() const;

  // not_found before the first put; corruption if the record fails its checksum.
  Status put_backing_root(const BackingRootRecord& record);
  Result<BackingRootRecord> backing_root() const;
  Status put_identity_rule(IdentityRule rule);
  Result<IdentityRule> identity_rule() const;

  // The id the next recorded file gets: every id below it may have been given out.
  Result<std::uint64_t> next_file_id() const;
  // Moves next_file_id forward to `next` (never back).
  Status skip_file_ids_to(std::uint64_t next);
  // Ids may be given out below `limit` only; the first id at or past it calls `raise(id)`, which
  // must durably record a new limit above `id` elsewhere (the superblock) and return it. Without
  // a reservation ids are given out freely.
  using RaiseIdLimit = std::function<Result<std::uint64_t>(std::uint64_t id)>;
  void reserve_ids(std::uint64_t limit, RaiseIdLimit raise);

  // Records a new backing file under a fresh id, durably; it takes over the path and inode
  // index entries (the records they named before keep their ids and pages).
  Result<CatalogFile> add_file(std::string_view relative_path, const BackingAttributes& attributes);
  // not_found if absent; corruption if the stored record is damaged.
  Result<CatalogFile> find_by_path(std::string_view relative_path) const;
  Result<CatalogFile> find_by_inode(std::uint64_t device, std::uint64_t inode) const;
  Result<CatalogFile> find_by_id(std::uint64_t file_id) const;
  // New attributes and path for a file (after its stale pages are dropped, or after it was
  // found renamed or renumbered); the indexes follow.
  Status update(std::uint64_t file_id, std::string_view relative_path, const BackingAttributes& attributes);
  // A rename made through the mount: the records the path index names at `from` and under it
  // move to `to`; with `exchange`, those at `to` move to `from` as well. Returns the records
  // that lost their path (the file a plain rename replaced): they keep their ids and pages.
  Result<std::vector<CatalogFile>> rename(std::string_view from, std::string_view to, bool exchange);
  // Files with write-back data that an fsync made durable in the cache and that has not gone
  // back yet: marked before the fsync returns, cleared once the data is back. A restart that
  // finds the cache's metadata damaged names them as files that may have lost data.
  Status mark_unwritten(std::uint64_t file_id, bool unwritten);
  Result<std::vector<std::uint64_t>> unwritten_files() const;

  // The record stays (its id, its pages, its path as a hint) but no index names it any more: a
  // file met at its path or inode gets a record of its own.
  Status unindex(std::uint64_t file_id);
  Status remove_file(std::uint64_t file_id);
  // Every recorded file (fsck, tests).
  Result<std::vector<CatalogFile>> all_files() const;

  // The first write the catalog failed (its disk full, a disk error); ok if none has. After one,
  // RocksDB refuses writes until reopened: the cache that uses this catalog has stopped.
  Status write_failure() const;

 private:
  struct Db;
  explicit Catalog(std::unique_ptr<Db> db);
  std::unique_ptr<Db> db_;
};

}  // namespace flashdir
