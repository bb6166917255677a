// The file-block cache engine: pages of backing files cached on the logical pages of an FTL.
// A library with no FUSE in it; the daemon (src/fs) only calls it.
//
//   auto backing = cache::open_posix_backing_store("/slow/dir");
//   auto mounted = cache::MountedCache::open("/var/cache/flashdir", std::move(backing.value()), {});
//   cache::Engine& engine = mounted.value()->engine();
//   auto file = engine.open_file("docs/report.pdf");          // validates, drops stale pages
//   std::vector<std::uint8_t> buffer(1 << 20);
//   auto got = engine.read(file.value(), 0, buffer);           // bytes read, short at EOF
//   engine.write(file.value(), 4096, some_bytes);
//   engine.fsync(file.value());                                // durable in cache (write-back) or backing
//   engine.release(file.value());
//   mounted.value()->close();                                  // write-back, clean mark
//
// Model (doc/cache.md): a slot is one data LPN holding one page of one file. The slot table
// maps (file, page) to a slot; replacement is CLOCK with a reference bit per slot. Slot
// metadata reaches the chip through a MetadataStore (LUFUW or a baseline) so that cached pages
// survive a restart. Write modes: write-through (the default), write-around, and write-back
// (dirty pages in the cache; a flusher thread writes them back between watermarks).
//
// Thread-safety: every method may be called from many threads at once. Locks, in the only
// order in which they may be taken (src/cache/engine_core.h):
//   1. namespace lock  (opens, releases, renames, unlinks: the catalog and the open files)
//   2. file lock       (per open file; shared for reads, exclusive for writes, truncate, fsync)
//   2b. backing lock   (per open file; the engine's own backing-file changes: write-back)
//   3. cache lock      (one; the slot table, the FTL and the metadata store; held for slot work
//                       and chip I/O only, never across backing I/O)
// A read miss's backing read and a write's backing write hold no engine-wide lock, and a hit
// releases the cache lock for its chip reads (doc/cache.md "Reads"): hits on different files
// do not wait for each other's chip I/O, only for each other's lookups.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashdir/cache/backing_store.h"
#include "flashdir/cache/lost_found.h"
#include "flashdir/cache/options.h"
#include "flashdir/catalog.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir::cache {

// An open file, valid until release(). Plain value: copy it freely between threads.
struct FileHandle {
  std::uint64_t value = 0;
  bool operator==(const FileHandle&) const = default;
};

// What the last open found (hot restart).
struct RestartReport {
  bool clean_shutdown = false;
  std::uint64_t usable_slots = 0;    // cached pages kept (clean and dirty)
  std::uint64_t dropped_slots = 0;   // entries that failed the usability rule (trimmed)
  std::uint64_t orphan_slots = 0;    // usable entries naming a file the catalog does not know
  // The catalog knew fewer files than the metadata pages name (it lost records: its write-ahead
  // log deleted, an older copy put back): the ids it lost, whose pages were dropped (dirty ones
  // saved in lost+found).
  std::uint64_t catalog_lost_files = 0;
  std::uint64_t dirty_slots = 0;     // dirty pages found
  std::uint64_t written_back_slots = 0;  // dirty pages written to their backing files
  // Dirty pages that could not go back: the page is damaged, or it lies past the largest file
  // the backing allows, or it could not be proven to belong to any file and there was no
  // lost+found to keep it. The open goes on without them (the loss is final either way);
  // `lost_dirty_reason` says why the first one went.
  std::uint64_t lost_dirty_slots = 0;
  std::string lost_dirty_reason;
  // Every file whose fsync'd data was lost or may have been ("path: why"): a dirty page that
  // could never go back, or a damaged metadata page where a file marked as holding unwritten data
  // may have had its pages described (Catalog::mark_unwritten). At most kMaxListedFiles listed;
  // files_with_losses counts them all.
  std::uint64_t files_with_losses = 0;
  std::vector<std::string> losses;
  static constexpr std::size_t kMaxListedFiles = 100;
  // Dirty pages whose file could not be proven to be the one now at their recorded place (it is
  // gone, or another file took its name): saved in lost+found, under these names.
  std::uint64_t saved_dirty_slots = 0;
  std::vector<std::string> saved_files;
  double usable_fraction = 1.0;      // usable / (usable + dropped + orphans); 1 when nothing was cached
  bool from_restart_image = false;   // a clean restart that read the restart image, not the metadata pages
  // Since a restart from the image, which reads its parts as they are needed: parts that
  // failed their check and were rebuilt from the chip (a chunk of entries from its metadata
  // pages, a file's page table from the entries), and cached pages the image held that the
  // chip could not give back (dropped, never served).
  std::uint64_t image_parts_damaged = 0;
  std::uint64_t image_slots_lost = 0;
  double seconds = 0;                // wall time of the whole restart
};

// A file the engine holds write-back data of (Engine::files_with_unwritten_data): the file at
// `relative_path` under the path rule, the inode (`device` as st_dev gives it) under the inode rule.
struct UnwrittenFile {
  std::string relative_path;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

// What a rename did to the name it went to (renameat2's RENAME_EXCHANGE, or a plain rename).
enum class RenameKind { replace, exchange };

// Counters since open; a consistent-enough snapshot (each counter is read atomically).
struct EngineStats {
  std::uint64_t capacity_pages = 0;
  std::uint64_t cached_pages = 0;
  std::uint64_t dirty_pages = 0;
  // Cached pages whose fills no commit covers yet: a power cut now would drop them.
  std::uint64_t unprotected_pages = 0;
  std::uint64_t open_files = 0;
  std::uint64_t read_requests = 0;
  std::uint64_t read_hit_pages = 0;
  std::uint64_t read_miss_pages = 0;
  std::uint64_t read_ahead_pages = 0;
  std::uint64_t write_requests = 0;
  std::uint64_t written_pages = 0;
  std::uint64_t admitted_pages = 0;
  std::uint64_t cutoff_bypassed_pages = 0;   // not admitted: a sequential stream past its cutoff
  std::uint64_t not_promoted_pages = 0;      // not admitted: fewer misses than promote_after_misses
  std::uint64_t evicted_pages = 0;           // each trimmed in the FTL
  std::uint64_t written_back_pages = 0;      // dirty pages written to the backing store
  std::uint64_t delayed_write_backs = 0;     // files written back after their close (write_back_delay_ms)
  std::uint64_t writer_waits = 0;            // writers that waited for the flusher (cache full of dirty)
  std::uint64_t commits = 0;                 // commits that had work (Engine::commit, the committer, the bound)
  std::uint64_t corrupt_pages = 0;           // hits whose page failed its checksum: dropped, read from backing
  std::uint64_t stale_drops = 0;             // files found changed on open: their pages dropped
  std::uint64_t renumbered_files = 0;        // files met under a new inode number, contents and owner the same
  std::uint64_t backing_errors = 0;
  std::uint64_t metadata_writes = 0;         // metadata pages written to the chip
  std::uint64_t metadata_entries_written = 0;  // entries carried by those writes (batching)
  std::uint64_t ram_index_bytes = 0;         // slot table, index, per-file state, metadata entries, measured
  double ram_bytes_per_cached_page = 0;      // ram_index_bytes / cached_pages (0 when empty)
  RestartReport restart;

  double hit_ratio() const;
  double metadata_writes_per_data_write() const;
};

// Every figure as one JSON object {"name": number or bool, ...}, in the order a person reads them.
std::string stats_json(const EngineStats& stats);

// Where a cache keeps the durable high-water mark of its file ids (MountedCache: the
// superblock, beside the catalog): every id the catalog gives out is below limit(), which raise()
// moves durably first. A catalog that lost records (its write-ahead log deleted, another copy put
// back) then never hands out an id the metadata pages still name.
class FileIdLimit {
 public:
  virtual ~FileIdLimit() = default;
  virtual std::uint64_t limit() const = 0;
  // Records a limit above `id` durably and returns it.
  virtual Result<std::uint64_t> raise(std::uint64_t id) = 0;
};

class RestartImage;        // cache/restart_image.h
class RestartImageWriter;

// What an engine may use beside its FTL, catalog and backing store; each may be missing.
struct EngineServices {
  LostFound* lost_found = nullptr;  // without: dirty pages nobody can prove are only counted lost
  FileIdLimit* file_ids = nullptr;  // without: the catalog's own next id is trusted
  // A restart image saved by the last clean close, opened and checked against this chip by the
  // caller (MountedCache: cache/restart_image.h): a clean open takes it instead of reading
  // every metadata page, if it fits this cache, and reads its parts as they are needed.
  std::shared_ptr<const RestartImage> restart_image = nullptr;
  // Where the data slots start: what the cache's superblock records (a cache formatted before
  // the field has after_metadata, and keeps that layout for good).
  format::SlotAlignment slot_alignment = format::SlotAlignment::logical_block;
};

class EngineCore;

// The admission into the cache of the pages a read missed, left by Engine::read to its caller
// to run once the reader has its bytes: the reply need not wait for the pages' programs, and a
// sequential reader's next request reaches the backing while they are made. Until it has run
// (destruction runs it) it holds the file's read lock, so a write, a truncate or the file's last
// release waits for it. Run it on the thread that read, before that thread reads again.
class DeferredFill {
 public:
  class Work {
   public:
    virtual ~Work() = default;
    virtual void run() = 0;
  };
  DeferredFill() = default;
  explicit DeferredFill(std::unique_ptr<Work> work) : work_(std::move(work)) {}
  DeferredFill(DeferredFill&&) noexcept = default;
  DeferredFill& operator=(DeferredFill&& other) noexcept {
    if (this != &other) {
      run();
      work_ = std::move(other.work_);
    }
    return *this;
  }
  ~DeferredFill() { run(); }
  // Admits the pages; a failure is the engine's (it stops, as at any chip failure), not the
  // read's, which was served.
  void run() {
    if (auto work = std::move(work_)) work->run();
  }

 private:
  std::unique_ptr<Work> work_;
};

class Engine {
 public:
  // Opens the engine over an FTL, catalog and backing store that outlive it (and the services,
  // if given). Refused if the catalog records another backing directory. On a cache never used
  // by an engine, records the backing directory and formats the slot metadata; otherwise
  // recovers it (hot restart: the report is in stats().restart) and writes back any dirty page
  // found, each only into the file it was recorded for (others go to lost+found). Pages whose
  // file id the catalog does not know are never served: a catalog that lost records is reported.
  static Result<std::unique_ptr<Engine>> open(Ftl& ftl, Catalog& catalog, BackingStore& backing,
                                              const EngineOptions& options, EngineServices services = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Opens a backing file (relative to the backing root) and validates the cache against it. The
  // file's cached state is its own (doc/daemon.md "File identity"): found by its inode (or, on
  // a backing that renumbers inodes, by its path), never shared with another file that met it
  // at one path; a file whose owner, size, mtime_ns or ctime_ns changed since it was last seen
  // has its pages dropped durably before the catalog records the new attributes. The path is
  // the name the file was reached by.
  Result<FileHandle> open_file(std::string_view relative_path);
  // The same with a file the caller already opened (the daemon's backing fd, adopted).
  Result<FileHandle> open_file(std::string_view relative_path, std::unique_ptr<BackingFile> file);
  // The same with the attributes the caller just stat'ed the file with (BackingFile::stat's):
  // the engine takes them instead of a stat of its own.
  Result<FileHandle> open_file(std::string_view relative_path, std::unique_ptr<BackingFile> file,
                               const BackingAttributes& attributes);
  // Reads into `out`; returns the bytes read, fewer only at end of file. With `later`, the
  // pages a miss at the end of the request brought in may be left there to admit (DeferredFill),
  // and the open's next sequential request reads on from them before it looks in the cache
  // (doc/cache.md "Reads").
  Result<std::size_t> read(FileHandle file, std::uint64_t offset, ByteSpan out, DeferredFill* later = nullptr);
  // Writes all of `data` (per the write mode); returns data.size().
  Result<std::size_t> write(FileHandle file, std::uint64_t offset, ConstByteSpan data);
  // Writes `data` at the end of the file (O_APPEND): the end as the engine has it (in
  // write-back, past the backing file's), or the backing file's if it grew behind the engine.
  Result<std::size_t> append(FileHandle file, ConstByteSpan data);
  Status truncate(FileHandle file, std::uint64_t size_bytes);
  // fallocate(2) on the backing file; cached pages of a punched, zeroed, collapsed or inserted
  // range (and, for the last two, every page after it) are dropped first.
  Status fallocate(FileHandle file, int mode, std::uint64_t offset, std::uint64_t length);
  // write-back: the file's dirty pages become durable in the cache (FTL durable watermark and
  // metadata), and the backing file is synced; other modes: the backing file is synced.
  Status fsync(FileHandle file);
  // write-back: writes the file's dirty pages back to the backing file and syncs it (nothing to
  // do in the other modes). The daemon calls it at close(2), so that the backing file holds
  // what was written through the mount (close-to-open) and its errors reach the caller.
  Status write_back(FileHandle file);
  // write_back() for a caller that is not the file's writer: an error a deferred write-back
  // met stays for the writer's fsync or close.
  Status write_back_keeping_error(FileHandle file);
  // The caller's opens of this file write straight to the backing file from now on (a file
  // with a second name: doc/daemon.md "One data path per inode"), which the engine cannot tell
  // from its own writes by the backing file's attributes. Its clean pages go now, and again at
  // its last release; until then no read or write-through write fills its pages. Write the
  // dirty pages back first (the caller's writes no longer come through the engine).
  Status bypass(FileHandle file);
  // The daemon calls this at close(2): write_back(), or under EngineOptions::write_back_delay_ms
  // the file's dirty pages made durable in the cache and the backing file given its size (as
  // fsync() does), the write-back left to the flusher within the delay.
  Status write_back_at_close(FileHandle file);
  // Writes back now the dirty pages a delayed close left of the file at `relative_path` with
  // `attributes` (a stat of it), if any: before the file is reached around the engine (an open
  // that bypasses the cache) or its times are set (its write-back would move them).
  Status write_back_closed(std::string_view relative_path, const BackingAttributes& attributes);
  // Whether a close leaves dirty pages for a delayed write-back (write-back mode, a delay set).
  bool delays_write_back() const;
  // Makes every write so far usable after a power cut: the FTL programs the pages of the writes
  // not yet finished that its device RAM still buffers, and the metadata says they finished.
  // The engine also commits by itself (EngineOptions::commit_interval_ms, commit_pending_bytes).
  Status commit();
  // The file's size as the engine has it: in write-back, past the backing file's end until the
  // pages there go back. Callers that report sizes (getattr, O_APPEND) take it from here.
  Result<std::uint64_t> size(FileHandle file);
  // Releases the handle; the last release of a file writes its dirty pages back, and drops its
  // pages if the file has no name left.
  Status release(FileHandle file);
  // Renames (unlinks) in the backing store and in the catalog; cached pages follow the file
  // (or are dropped with it once it is gone). Paths are relative to the backing root.
  Status rename(std::string_view from, std::string_view to);
  Status unlink(std::string_view relative_path);
  // The same, for a caller that made the change in the backing directory itself (the daemon,
  // which renames and unlinks with its caller's credentials).
  Status renamed(std::string_view from, std::string_view to, RenameKind kind = RenameKind::replace);
  Status unlinked(std::string_view relative_path);
  // How this cache tells files apart (chosen at open: EngineOptions::identity, or by the backing).
  IdentityRule identity_rule() const;
  // Stops the engine for `reason` (the cache's own storage failed: its disk is full, its catalog
  // failed): every later call fails with it. The write-back data it holds, fsync'd or not, is
  // first made durable as fsync makes it, for the restart that resumes the cache to write back;
  // an error says why that failed (the data is then as a power cut would leave it).
  Status stop(const Status& reason);
  // Whether the engine has stopped (stop(), or an FTL failure); the reason if so.
  std::optional<Status> stopped() const;
  // The files whose write-back data the engine holds and has not written back: nobody may read or
  // write them around the engine. Answered from memory, also once the engine has stopped.
  std::vector<UnwrittenFile> files_with_unwritten_data();
  // Whether the file open as `file` is one of them (its identity, not the name it had).
  bool holds_unwritten_data(FileHandle file);
  // Writes every dirty page back, makes everything durable and writes the clean-shutdown mark.
  // Every later call fails.
  Status close();
  // After close(): a restart image (what the next clean open would otherwise rebuild from every
  // metadata page): its parts written to `parts`, its index returned, for the caller to finish
  // with the FTL's final checkpoint generation (MountedCache). An error if the close left
  // anything the image cannot hold.
  Result<std::vector<std::uint8_t>> save_restart_image(RestartImageWriter& parts);

  EngineStats stats() const;
  // The FTL's counters (chip operations, GC, write amplification, erase counts, RAM split),
  // read under the cache lock so that no request changes the FTL meanwhile.
  FtlStats ftl_stats() const;

 private:
  explicit Engine(std::unique_ptr<EngineCore> core);
  std::unique_ptr<EngineCore> core_;
};

// How the chip's latency is felt: simulated only advances the chip's clock; real_time also
// sleeps for it after each chip operation (the daemon's nand_latency=emulate).
enum class ChipTiming { simulated, real_time };

// Whether the chip can be told to lose power (the daemon's power_cut_control, for demos and
// tests of a restart after a torn page): through a FaultyChip that does nothing until asked.
enum class ChipFaults { none, cut_on_request };

// A cache directory opened for use: superblock, chip image, FTL, catalog and the engine, owned
// together and closed in order.
class MountedCache {
 public:
  // The FTL runs with the options the cache was formatted with unless `ftl` says otherwise
  // (the device RAM's size and policy may change between mounts).
  static Result<std::unique_ptr<MountedCache>> open(const std::filesystem::path& cache_dir,
                                                    std::unique_ptr<BackingStore> backing,
                                                    const EngineOptions& options,
                                                    std::optional<FtlOptions> ftl = std::nullopt,
                                                    ChipTiming timing = ChipTiming::simulated,
                                                    ChipFaults faults = ChipFaults::none);
  // Closes if close() was not called (errors are logged), unless the engine has stopped: then the
  // cache stays as a power cut would leave it and the next open recovers it.
  ~MountedCache();
  Engine& engine() { return *engine_; }
  Ftl& ftl();
  // Closes the engine, then the FTL (final checkpoint) and marks the superblock clean.
  Status close();
  // The chip loses power during its next program, tearing that page (opened with
  // ChipFaults::cut_on_request; invalid_argument otherwise). The engine then stops, as at any
  // chip failure, and the next open recovers from what the chip holds.
  Status cut_power_at_next_program();

 private:
  struct Parts;
  MountedCache(std::unique_ptr<Parts> parts, std::unique_ptr<Engine> engine);
  std::unique_ptr<Parts> parts_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace flashdir::cache
