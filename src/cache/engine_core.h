// The engine's implementation behind cache::Engine (include/flashdir/cache/engine.h says what
// each call does; doc/cache.md how).
//
// Locks, taken only in this order:
//   namespace_mutex_   opens, releases, renames, unlinks, close: the catalog and the open-file
//                      maps change together
//   FileState::lock    per file: shared for reads, exclusive for writes, truncates, fsyncs
//   FileState::backing_mutex  per file: the engine's own changes to the backing file outside
//                      FileState::lock (the write-back flusher takes only this and the next)
//   cache_mutex_       the slot table, the FTL and the metadata store; held for slot work and
//                      chip I/O, never across backing I/O, and released during a hit's chip
//                      reads (read_hit: the FTL's prepared reads, doc/cache.md "Reads")
//   handles_mutex_     the handle map only (leaf)
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "cache/file_state.h"
#include "cache/meta/metadata_store.h"
#include "cache/owed_pages.h"
#include "cache/slot_table.h"
#include "flashdir/cache/engine.h"
#include "flashdir/cache/lost_found.h"

namespace flashdir::cache {

// Dirty pages a write-back dropped because they can never go back: damaged in the cache, or
// past the largest file the backing allows (EFBIG: its file system's limit, or the daemon's
// RLIMIT_FSIZE).
struct LostPages {
  Status first;                    // the first reason: what the file's user is told, once
  std::uint64_t count = 0;         // dirty pages dropped
  bool past_largest_file = false;  // some went for EFBIG: the file now ends where its backing file does

  void add(const Status& reason, std::uint64_t pages) {
    if (first.is_ok()) first = reason;
    count += pages;
    if (reason.sys_errno() == EFBIG) past_largest_file = true;
  }
};

// Pages of a write-back batch: the slot each was read from, and its key then.
struct BatchPages {
  std::span<const SlotIndex> slots;
  std::span<const SlotKey> keys;
};

// The file pages of one write-back batch, in page order: the slot each was read from, its key
// then, and where its bytes are in the batch's buffer.
struct WriteBackBatch {
  std::vector<SlotIndex> slots;
  std::vector<SlotKey> keys;
  std::vector<std::size_t> buffer_page;  // the page's index in the batch's byte buffer

  BatchPages all() const { return {slots, keys}; }
  BatchPages first(std::size_t count) const { return {std::span(slots).first(count), std::span(keys).first(count)}; }
  BatchPages after(std::size_t count) const { return {std::span(slots).subspan(count), std::span(keys).subspan(count)}; }
  // Appends `pages` (slots and keys).
  void add(BatchPages pages) {
    slots.insert(slots.end(), pages.slots.begin(), pages.slots.end());
    keys.insert(keys.end(), pages.keys.begin(), pages.keys.end());
  }
};

// A write-back batch's bytes: grown to the largest batch, never zeroed (a page's bytes are used
// only once it was read into them).
struct WriteBackBuffer {
  std::unique_ptr<std::uint8_t[]> bytes;
  std::size_t pages = 0;
  ByteSpan grown_to(std::size_t want_pages, std::uint32_t page_size);
};

// A batch taken for write-back: its pages (marked flushing) and their bytes, read from the
// chip, and the file's size when they were taken, at which its backing write is cut.
struct TakenBatch {
  bool found = false;  // a dirty page to take was found (its pages may all have been damaged, and dropped)
  WriteBackBatch pages;
  ConstByteSpan bytes;
  std::uint64_t size_bytes = 0;
};

class EngineCore {
 public:
  static Result<std::unique_ptr<EngineCore>> open(Ftl& ftl, Catalog& catalog, BackingStore& backing,
                                                  const EngineOptions& options, EngineServices services);
  ~EngineCore();  // stops the flusher; writes nothing back (close() does)

  // `caller_attributes`: the file's attributes as the caller just stat'ed it (raw device).
  Result<FileHandle> open_file(std::string_view relative_path, std::unique_ptr<BackingFile> file,
                               std::optional<BackingAttributes> caller_attributes = std::nullopt);
  Result<std::size_t> read(FileHandle handle, std::uint64_t offset, ByteSpan out, DeferredFill* later = nullptr);
  Result<std::size_t> write(FileHandle handle, std::uint64_t offset, ConstByteSpan data);
  Result<std::size_t> append(FileHandle handle, ConstByteSpan data);
  Status truncate(FileHandle handle, std::uint64_t size_bytes);
  Status fallocate(FileHandle handle, int mode, std::uint64_t offset, std::uint64_t length);
  Status bypass(FileHandle handle);
  Status fsync(FileHandle handle);
  Status write_back(FileHandle handle, bool take_error);
  Status write_back_at_close(FileHandle handle);
  Status write_back_closed(std::string_view relative_path, const BackingAttributes& attributes);
  // write-back with a delay: a close leaves the file's dirty pages to the flusher.
  bool delays_write_back() const {
    return options_.write_mode == WriteMode::write_back && options_.write_back_delay_ms != 0;
  }
  Status commit();
  Result<std::uint64_t> size(FileHandle handle);
  Status release(FileHandle handle);
  Status rename(std::string_view from, std::string_view to);
  Status unlink(std::string_view relative_path);
  Status renamed(std::string_view from, std::string_view to, RenameKind kind);
  Status unlinked(std::string_view relative_path);
  IdentityRule identity_rule() const { return rule_; }
  Status stop(const Status& reason);
  std::optional<Status> stopped() const;
  std::vector<UnwrittenFile> files_with_unwritten_data();
  bool holds_unwritten_data(FileHandle handle);
  Status close();
  // After close(): a restart image's parts into `parts`, its index returned (Engine::save_restart_image).
  Result<std::vector<std::uint8_t>> save_restart_image(RestartImageWriter& parts);
  EngineStats stats() const;
  FtlStats ftl_stats() const;

  BackingStore& backing() { return backing_; }

  // Pages one of the cache's FTL reads carries at most (a run of consecutive slots).
  static constexpr std::uint32_t kMaxRunPages = 64;
  // Pages one FTL write of a write's or a fill's pages carries at most (store_pages): a whole
  // FUSE write (1 MiB, 256 pages of 4 KiB). The FTL programs a write of more than half a block
  // straight from its bytes; in runs of 64 every page was copied into the device RAM's write
  // buffer (an allocation each), gathered again for its program and dropped: 1 MiB writes over
  // tmpfs went from 260-284 to 335-361 MB/s in write-through without (doc/cache.md "Writes").
  static constexpr std::uint32_t kMaxStoreRunPages = 256;

 private:
  EngineCore(Ftl& ftl, Catalog& catalog, BackingStore& backing, const EngineOptions& options,
             const SlotLayout& layout, EngineServices services);

  struct Counters {
    std::atomic<std::uint64_t> read_requests{0}, read_hit_pages{0}, read_miss_pages{0}, read_ahead_pages{0},
        write_requests{0}, written_pages{0}, admitted_pages{0}, cutoff_bypassed_pages{0}, not_promoted_pages{0},
        evicted_pages{0}, corrupt_pages{0}, stale_drops{0}, backing_errors{0}, written_back_pages{0},
        delayed_write_backs{0}, writer_waits{0}, commits{0}, renumbered_files{0};
  };

  // Open, step by step (identity.cc): the cache belongs to this backing directory (recorded at
  // its first use), and the identity rule it recorded or the one wanted now.
  Status check_backing_root(const BackingRoot& root, bool used_before);
  // The catalog's ids start past every id that may have been given out (the services' file id
  // limit), and the limit moves ahead of them. Returns the catalog's own next id from before.
  Result<std::uint64_t> reserve_file_ids();
  Result<IdentityRule> recorded_identity_rule(IdentityRule wanted);
  // After the restart, under a rule other than the one the cache recorded: no clean page can be
  // trusted to belong to the file its record now names.
  Status change_identity_rule(IdentityRule wanted);

  // `catalog_next`: the catalog's next file id as it was found; a page of a later id proves the
  // catalog lost records.
  Status recover(const RecoveredSlots& recovered, IdentityRule recorded_rule, std::uint64_t catalog_next);
  // A clean restart from a restart image instead of the metadata pages (true), or false with
  // the reason logged and nothing changed, when its index does not fit this cache or names a
  // file the catalog no longer knows. The image's parts are read as they are needed.
  // restart_from_image.cc.
  Result<bool> restore_from_image(std::shared_ptr<const RestartImage> image, MetadataScheme scheme,
                                  std::uint64_t catalog_next);
  // Restart: the dirty pages found go back to their files, each proven to be the file the
  // catalog recorded; the others are saved in lost+found.
  Status write_back_recovered(const std::vector<std::uint64_t>& file_ids, IdentityRule recorded_rule);
  // Saves the dirty pages of `file` in lost+found (or, with none, counts them lost), then drops
  // every page of it and forgets it.
  Status save_lost_dirty_pages(const CatalogFile& file, const std::string& reason);
  // Counts `pages` dirty pages the restart could not write back, keeping the first reason.
  void note_lost_at_restart(std::uint64_t pages, const Status& reason);
  // Names a file whose fsync'd data the restart found lost, or possibly lost, and why.
  void note_file_loss(const std::string& path, const std::string& why);
  // After the restart's write-back: the catalog's marks of files holding fsync'd data not yet
  // back. With damaged metadata pages every marked file may have lost pages described there, and
  // is named; a mark whose file has no dirty page left is cleared.
  Status settle_unwritten_marks(std::uint64_t damaged_metadata_pages);
  Result<OpenHandle*> handle_of(FileHandle handle);
  Status refresh_after_rename(std::string_view to);

  // The backing file's attributes with its device made relative to the root's.
  Result<BackingAttributes> attributes_of(BackingFile& file);
  // `attributes` with the device made relative to the root's (recorded as 0 on the root's own).
  BackingAttributes relative_to_root(BackingAttributes attributes) const;
  // The key of the file `attributes` describes, reached at `path`, under the cache's rule.
  FileKey key_of(std::string_view path, const BackingAttributes& attributes) const;
  // A file closed by all with dirty pages that failed to go back stays in dirty_files_ for the
  // flusher: its state, if `key` names it, so that a reopen carries on with it (its size, its
  // dirty pages) instead of validating it, which would drop those pages as stale. Namespace
  // lock held.
  std::shared_ptr<FileState> still_dirty(const FileKey& key);
  // At the last release: whether the file was only read since the open that validated it, so
  // that the release need not stat it. Namespace and backing locks held.
  bool only_read_since_validated(FileState& file);
  // The state (open, or waiting for the flusher) that holds the catalog record `file_id`, if
  // any. Namespace lock held.
  std::shared_ptr<FileState> state_of_record(std::uint64_t file_id);
  // Takes a file out of dirty_files_ and closes its write-back descriptor (after its pages were
  // dropped). Namespace lock held, no other.
  void forget_dirty_file(std::uint64_t file_id);
  // Drops every page of a file nobody holds and forgets its record. Namespace lock held.
  Status forget_file(std::uint64_t file_id);
  // An open state its key no longer reaches (path rule: another file took its path): it serves
  // its handles on, and at its last release its pages go and its record is forgotten.
  Status detach(const std::shared_ptr<FileState>& state);
  // The catalog record of the file at `path` with `attributes` (nobody has it open through the
  // engine): found by the rule's key, its pages dropped durably first if it changed, or new.
  Result<std::uint64_t> validate(std::string_view path, const BackingAttributes& attributes);
  // Inode rule, no record of the inode that describes this file: the record at `path`, if it
  // holds a file whose number alone changed (a backing that renumbers inodes, seen by contents
  // and owner holding) and nobody holds it.
  Result<std::optional<CatalogFile>> renumbered_record(std::string_view path, const BackingAttributes& attributes);

  // After the engine changed the backing file: the attributes the next validation expects.
  Status note_own_change(FileState& file, BackingFile& backing);
  // Before the engine changes the backing file (but for a write after its own unseen writes:
  // FileState::own_writes_unseen), and before an append (backing_mutex held, not the cache
  // lock): a file that differs from what the engine left was changed behind it. Its
  // clean pages are dropped then (they may hold bytes the file no longer has; note_own_change
  // would otherwise take the change for the engine's own, and the stale pages would be served
  // after the next open too), its dirty ones stay (the newest data). In write-through and
  // write-around its size follows the backing file's; in write-back the engine's size stays
  // (a truncate behind the engine loses to the dirty pages past it, as any two writers race).
  Status note_outside_change(FileState& file, BackingFile& backing);
  // Before a write or an append (backing_mutex held): note_outside_change(), but for the writes
  // after the first of a run (FileState::own_writes_unseen, cached_writes_checked), which stat
  // nothing, unless a write-through or write-around write `reaches_end` (ends at the engine's
  // end of the file or past it; every append does). Such a write sets the backing file's size
  // to what the engine expects, and so would hide a change of size behind the engine from the
  // next stat: a file truncated behind it kept the cut bytes in the cache, one grown behind it
  // zeros where it had bytes. The limit, as for two NFS clients writing one file without locks:
  // a same-size change behind the engine between two of its writes is taken for its own
  // (doc/cache.md "Files, staleness and the catalog"); in write-back, appends go to the
  // engine's end of the file.
  Status check_before_write(FileState& file, BackingFile& backing, bool reaches_end);
  // Under cache_mutex_ (or at restart, when nothing else runs): drops the file's clean pages,
  // keeps its dirty ones.
  Status drop_clean_pages(std::uint64_t file_id);
  // write() with the file lock held exclusively; `checked`: check_before_write() ran already (an
  // append's, for its end).
  Result<std::size_t> write_locked(OpenHandle& open, std::uint64_t offset, ConstByteSpan data, bool checked);
  // write_locked() in write-through (write_through.cc): the backing file takes the write, then
  // the cache; a large write's pages are stored behind it, while the next write goes to the
  // backing file.
  Result<std::size_t> write_through(OpenHandle& open, std::uint64_t offset, ConstByteSpan data);
  // With the file lock held (shared or exclusive), or no operation on the file in flight (its
  // last release, the engine's close): the pages of its last large write-through write go into
  // the cache, where they must be before its pages are read, dropped or checked.
  Status store_written_behind(FileState& file);
  // Under cache_mutex_: the contents of the pages [offset, offset + data.size()) touches into
  // `out`, in a file `new_size` long: pages covered whole as written, pages covered in part
  // patched from their cached copies (left out if not cached).
  Status prepare_written_pages(std::uint64_t file_id, std::uint64_t offset, ConstByteSpan data,
                               std::uint64_t new_size, WrittenPages& out);
  // Takes cache_mutex_: stores the pages `written` keeps; it is no longer pending.
  Status store_written_pages(std::uint64_t file_id, WrittenPages& written);
  // Consecutive slots holding consecutive pages of a file (pages 0: none).
  struct CachedRun {
    SlotIndex slot = 0;
    std::uint32_t pages = 0;
    bool operator==(const CachedRun&) const = default;
  };
  // Under cache_mutex_: the cached run from `page` on, at most `max_pages` long.
  CachedRun cached_run(std::uint64_t file_id, std::uint64_t page, std::uint32_t max_pages) const;
  // Under cache_mutex_: copies the cached run starting at `page` into `out` (page-sized
  // pieces); returns the pages served (0: `page` is not cached). Corrupt pages are dropped.
  Result<std::uint32_t> read_cached_run(std::uint64_t file_id, std::uint64_t page, std::uint32_t max_pages,
                                        ByteSpan out);
  // An FTL read prepared under cache_mutex_ into `bytes`, and once finished what read() would
  // have returned.
  struct UnlockedRead {
    PreparedRead* prepared;
    ByteSpan bytes;
    Status result;
  };
  // Reads the chip pages of prepared reads with `cache` (cache_mutex_, held on entry and on
  // return) released where the chip allows concurrent reads, then finishes them under it. The
  // FTL reads again what GC erased meanwhile; whether the slots still hold the pages is the
  // caller's check. Returns check_alive().
  Status read_outside_lock(std::unique_lock<std::mutex>& cache, std::span<UnlockedRead> reads);
  // Why a read or a write-back of a dirty page fails when its only copy, in the cache, is damaged.
  static Status damaged_dirty_page(std::uint64_t file_id, std::uint64_t page_no);
  // read_cached_run() for a reader, with `cache` (cache_mutex_) held on entry and on return but
  // released while the chip pages are read and verified: hits on other files (and other
  // threads' slot work) go on meanwhile. The run is served only if its slots still hold the
  // same pages afterwards; otherwise it is read again under the lock.
  Result<std::uint32_t> read_hit(std::unique_lock<std::mutex>& cache, std::uint64_t file_id, std::uint64_t page,
                                 std::uint32_t max_pages, ByteSpan out);
  // Under cache_mutex_: serves `run` (of the file's pages from `page` on), which the FTL read
  // into `out` with status `read`: on corruption page by page again, dropping damaged pages
  // (the run is cut before the first); referenced for CLOCK. Returns the pages served.
  Result<std::uint32_t> serve_run(std::uint64_t file_id, std::uint64_t page, CachedRun run, Status read, ByteSpan out);
  // Under cache_mutex_: pages from `page` on that are not cached, up to `max_pages`.
  std::uint32_t missing_run(std::uint64_t file_id, std::uint64_t page, std::uint32_t max_pages) const;
  // write-back: a write into the cache as dirty pages (file lock held exclusively).
  Result<std::size_t> write_into_cache(OpenHandle& open, std::uint64_t offset, ConstByteSpan data);
  // Writes dirty pages of `file_id` back to `target` (cut at `file_size`, read with each batch's
  // pages), syncs it and marks them clean; at most about `max_pages` (0: those dirty when it
  // begins, drain_write_back), and no more once `give_way_to` (if given) has a thread waiting
  // for it. Takes cache_mutex_ only around slot work.
  // An error leaves the pages not written dirty, except pages that can never go back, which are
  // dropped and added to `lost`.
  Status write_back(std::uint64_t file_id, BackingFile& target, const std::atomic<std::uint64_t>& file_size,
                    std::size_t max_pages, const GivingWayMutex* give_way_to, LostPages& lost);
  // write_back()'s next batch of `file_id`, at most `max_pages`, read into `buffer`: the next
  // pages of `owed` if given, else the file's lowest dirty pages (within kMaxScatteredSlotRuns
  // with `scattered_limit`); not `found` when no such page is dirty.
  Status take_write_back_batch(std::uint64_t file_id, const std::atomic<std::uint64_t>& file_size,
                               std::size_t max_pages, bool scattered_limit, OwedPages* owed, WriteBackBuffer& buffer,
                               TakenBatch& taken, LostPages& lost);
  // Syncs `target`, then marks clean the pages of `written` that no write made dirty again
  // meanwhile, and takes the flushing mark off `left` (pages of a batch that stayed unwritten);
  // returns with the cache lock held in `cache`.
  Status settle_write_back(BackingFile& target, BatchPages written, BatchPages left, std::unique_lock<std::mutex>& cache);
  // A drain's write-back (write_back with no limit and nobody to give way to): the pages dirty
  // when it begins, each batch going to the backing file while the next is read from the chip,
  // the backing file synced once per write_back_drain_sync_bytes written.
  Status drain_write_back(std::uint64_t file_id, BackingFile& target, const std::atomic<std::uint64_t>& file_size,
                          LostPages& lost);
  // Drops `file_id`'s pages from `from` on, the backing having refused the first with `why`;
  // counts the dirty ones below `size_bytes` into `lost`. Cache lock held.
  Status drop_unwritable(std::uint64_t file_id, std::uint64_t from, std::uint64_t size_bytes, const Status& why,
                         LostPages& lost);
  // write_back()'s reads of `slots` (dirty pages of `file_id`, in page order) into `bytes` (a
  // page each, in that order), one FTL read per run of consecutive slots, the chip I/O outside
  // the cache lock (held on entry and return). The batch gets the pages that still hold their file page afterwards, each
  // marked flushing; a damaged page is dropped (and added to `lost` if it lies below
  // `size_bytes`).
  Status read_write_back_batch(std::unique_lock<std::mutex>& cache, std::uint64_t file_id,
                               const std::vector<SlotIndex>& slots, std::uint64_t size_bytes,
                               ByteSpan bytes, WriteBackBatch& batch, LostPages& lost);
  // write_back() for an open file, its backing_mutex held; pages lost are noted in the file's
  // write_back_error.
  Status flush_file_locked(FileState& file, std::size_t max_pages);
  // write-back: the file's dirty pages become durable in the cache, then the backing file takes
  // the file's size (fsync, and a close with a delay). backing_mutex held, and the file lock or
  // the last handle.
  Status make_dirty_pages_durable(FileState& file, BackingFile& backing);
  // A close with a delay: make_dirty_pages_durable, and the flusher is due to write the file back
  // within the delay (write_back_due). backing_mutex held.
  Status defer_write_back(FileState& file);
  // Under cache_mutex_: the file is due for the flusher a delay from now.
  void schedule_write_back(FileState& file);
  // The flusher, once a file's delay is over: writes it back (retried a delay later on error)
  // and settles it. Takes every lock it needs; holds none on entry.
  void finish_delayed_write_back(const std::shared_ptr<FileState>& file);
  // A file in dirty_files_ whose pages went back: closed by all and clean now, it leaves the
  // flusher (its write-back descriptor closes) and the catalog records it as it now is.
  // Namespace lock held, no other.
  Status settle_closed_file(const std::shared_ptr<FileState>& file);
  // The pages the flusher writes back per batch: of a sequential stream behind its writer, and
  // under a watermark's pressure.
  std::size_t stream_batch_pages() const;
  std::size_t pressure_batch_pages() const;
  // Under cache_mutex_: how many of a flusher's batch `slots` (in page order) to take, cut before
  // the run of consecutive slots holding consecutive pages that would pass the limit.
  std::size_t within_scattered_slot_limit(const std::vector<SlotIndex>& slots) const;
  // The file's write_back_error (or else the damaged dirty page a read found), cleared: reported
  // once, by the next fsync or close. The cache lock must not be held.
  Status take_write_back_error(FileState& file);
  void run_flusher();
  void stop_flusher();
  // commit() under cache_mutex_.
  Status commit_locked();
  // The committer thread (commit.cc): commit() once the oldest write no commit covers is
  // options_.commit_interval_ms old.
  void run_committer();
  void stop_committer();
  // Under cache_mutex_: puts `count` pages of data (page-sized pieces) into the cache: cached
  // pages are rewritten in place, the others take new slots (evicting by CLOCK). Dirty pages
  // (write-back) stop at the first page that finds no clean slot to take; the pages stored
  // from the first on are returned.
  Result<std::uint32_t> store_pages(std::uint64_t file_id, std::uint64_t first_page, std::uint32_t count,
                                    ConstByteSpan data, bool admit_new, bool dirty = false);
  // Under cache_mutex_: drops the slots (forced: the drop is on the chip when this returns).
  Status drop_slots(const std::vector<SlotIndex>& slots);
  Status drop_file_pages(std::uint64_t file_id, std::uint64_t from_page);
  // Under cache_mutex_: `slots` of `file_id` are dropped, and every buffered drop of the file
  // reaches the chip (MetadataStore::invalidate_file).
  Status invalidate(std::uint64_t file_id, const std::vector<SlotIndex>& slots);
  // Under cache_mutex_: a file changed behind the cache loses all its pages (counted).
  Status drop_stale(std::uint64_t file_id);
  // Drops the cached copies of pages [first_page, last_page] of a file.
  Status drop_range(std::uint64_t file_id, std::uint64_t first_page, std::uint64_t last_page);
  bool promoted(std::uint64_t file_id, std::uint64_t page);
  // Admits `count` pages of a file read from its backing file (`bytes`, from `first_page` on),
  // from the first one promoted (promote_after_misses) on. The file's read lock is held.
  Status admit_missed(std::uint64_t file_id, std::uint64_t first_page, std::uint32_t count, ConstByteSpan bytes);
  class MissFill;  // reads.cc: admit_missed() after the reply (DeferredFill)
  // The engine stops after an FTL failure (a power cut): every later call returns it.
  Status fail(Status status);
  Status check_alive() const;
  // The files (open, or closed with pages that failed to go back) holding dirty pages; under
  // namespace_mutex_ and cache_mutex_.
  std::vector<std::shared_ptr<FileState>> files_holding_dirty_pages();
  // stop(): makes the write-back data of `files` durable in the cache and in the backing files' sizes.
  Status keep_write_back_data(const std::vector<std::shared_ptr<FileState>>& files);

  Ftl& ftl_;
  Catalog& catalog_;
  BackingStore& backing_;
  LostFound* const lost_found_;  // may be null: unprovable dirty pages are then only counted
  FileIdLimit* const file_ids_;  // may be null: the catalog's next id is trusted
  const EngineOptions options_;
  const SlotLayout layout_;
  const std::uint32_t page_size_;
  IdentityRule rule_ = IdentityRule::inode;  // set once at open
  std::uint64_t root_device_ = 0;            // the backing root's st_dev: recorded as device 0

  std::mutex namespace_mutex_;
  absl::flat_hash_map<FileKey, std::shared_ptr<FileState>> open_files_;

  mutable std::mutex cache_mutex_;
  std::unique_ptr<MetadataStore> store_;
  std::optional<SlotTable> slots_;  // over store_'s entries: made once the store is open
  absl::flat_hash_map<SlotKey, std::uint32_t> miss_counts_;  // promotion; guarded by cache_mutex_
  Status failed_;                                              // guarded by cache_mutex_
  bool closed_ = false;                                        // guarded by cache_mutex_

  mutable std::shared_mutex handles_mutex_;
  absl::flat_hash_map<std::uint64_t, std::unique_ptr<OpenHandle>> handles_;
  std::uint64_t next_handle_ = 1;

  // write-back (guarded by cache_mutex_): the open state of each file with dirty pages, the
  // flusher's wake-ups (dirty share past the high watermark, a writer waiting for a clean slot)
  // and the writers' (a slot became clean, or the flusher failed).
  absl::flat_hash_map<std::uint64_t, std::shared_ptr<FileState>> dirty_files_;
  std::condition_variable flush_wanted_;
  std::condition_variable slot_cleaned_;
  std::uint32_t writers_waiting_ = 0;
  bool draining_ = false;  // between the high and the low watermark
  // Files a sequential stream of writes left a stream batch of dirty pages in: the flusher
  // writes them back ahead of their close while no watermark presses it.
  absl::flat_hash_set<std::uint64_t> streaming_files_;
  // The pages of the flusher's next write to a backing file (write_back(): its batches go in
  // pieces sized to the store's pace). The flusher thread's own.
  std::size_t flusher_piece_pages_ = 0;
  // Files closed with dirty pages under a write-back delay, in the order they fall due (the
  // delay is the same for all); an entry whose file's write_back_due differs is stale.
  struct DelayedWriteBack {
    std::chrono::steady_clock::time_point due;
    std::uint64_t file_id = 0;
  };
  std::deque<DelayedWriteBack> delayed_write_backs_;
  bool stopping_ = false;
  Status flush_error_;
  std::thread flusher_;

  // When the oldest data write that no commit covers yet happened (steady clock ticks; 0: none),
  // set and cleared under cache_mutex_, read by the committer without it.
  std::atomic<std::chrono::steady_clock::rep> uncommitted_since_{0};
  // options_.commit_pending_bytes in cache pages (0: no bound).
  const std::uint64_t commit_pending_pages_;
  std::mutex committer_mutex_;  // guards committer_stopping_ only; never held with another lock
  std::condition_variable committer_wake_;
  bool committer_stopping_ = false;
  std::thread committer_;

  Counters counters_;
  RestartReport restart_;
};

}  // namespace flashdir::cache
