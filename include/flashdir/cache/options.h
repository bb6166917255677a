// How a cache engine behaves: write mode, metadata scheme, read-ahead, admission, write-back
// watermarks. Every field has a unit and a default; validate() names the bad field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flashdir/catalog.h"
#include "flashdir/status.h"

namespace flashdir::cache {

enum class WriteMode : std::uint8_t {
  write_through,  // a write goes to the backing file, then (admitted) to the cache; the default
  write_back,     // a write goes to the cache as a dirty page; a flusher writes it back later
  write_around,   // a write goes to the backing file only; cached pages it covers are dropped
};
std::string_view write_mode_name(WriteMode mode);
Result<WriteMode> parse_write_mode(std::string_view text);

// How the slot metadata reaches the chip (doc/cache.md): what survives a power cut.
enum class MetadataScheme : std::uint8_t {
  lufuw,                // papers/lufuw.txt: clean and dirty slots survive
  write_update,         // Flashcache: metadata written only on clean<->dirty; only dirty slots survive
  update_write_update,  // two forced metadata writes per data write
};
std::string_view metadata_scheme_name(MetadataScheme scheme);
Result<MetadataScheme> parse_metadata_scheme(std::string_view text);
// The scheme recorded in a catalog's options text (EngineOptions::to_json): corruption if the
// text is not JSON naming a known scheme.
Result<MetadataScheme> recorded_metadata_scheme(std::string_view options_json);

struct EngineOptions {
  WriteMode write_mode = WriteMode::write_through;
  // Fixed when the cache is first used (recorded in the catalog); a later open must agree.
  MetadataScheme metadata = MetadataScheme::lufuw;
  // Pages read from the backing file beyond a read miss, and admitted with it (stopping at EOF
  // and at the first page already cached), when the read is sequential: at the start of the
  // file, or on from where the same open's previous read ended.
  std::uint32_t read_ahead_pages = 8;
  // Pages a read's miss takes from the backing file in one read at most (the rest of the
  // request, up to this; 64 to 1024). A store whose round trips overlap within one read (a
  // remote one, read with O_DIRECT or in parallel pieces: BackingReads) wants them large: the daemon
  // makes it 256 (1 MiB) there. A larger read is also a larger fill, so more of it may still be
  // unprotected at a cut (bounded by commit_pending_bytes all the same).
  std::uint32_t miss_read_pages = 64;
  // write-through: a write of 16 pages or more is stored in the cache behind it, while the next
  // write of the file travels to the backing file (doc/cache.md "Writes"). It pays where the
  // backing write waits on a network (slowstore, 1 ms a call, 1 Gbit/s: 0.85 -> 0.90 of the
  // store's speed); over a local file system both are copies on the same CPUs, and the overlap
  // costs more than it gains (tmpfs: 10-15% slower): the daemon turns it off there.
  bool store_writes_behind = true;
  // A file read (written) sequentially for more than this many bytes in a row is not admitted
  // any further until the stream breaks; 0 admits every stream.
  std::uint64_t read_sequential_cutoff_bytes = 16ULL << 20;
  std::uint64_t write_sequential_cutoff_bytes = 16ULL << 20;
  // A page is admitted on its Nth miss; 1 admits on the first. Misses are remembered in a
  // bounded table (promotion_table_entries) that forgets everything when it fills.
  std::uint32_t promote_after_misses = 1;
  std::uint32_t promotion_table_entries = 1 << 16;
  // write-back: the flusher starts when dirty pages exceed the high share of the cache and
  // stops below the low one. A writer that finds no clean page to evict waits for it.
  std::uint8_t dirty_high_watermark_percent = 50;
  std::uint8_t dirty_low_watermark_percent = 25;
  // At most this many pages per batch the flusher writes back under a watermark's pressure, and
  // never more than a quarter of the cache nor 64 runs of consecutive slots (doc/cache.md
  // "Write-back"). Each batch costs the store a sync and two stats, so a small one holds a
  // writer to a fraction of the store's speed (64 pages, 256 KiB: a tenth).
  std::uint32_t flush_batch_pages = 2048;
  // write-back: an open's sequential stream of writes this long goes back behind it, this many
  // bytes (rounded down to whole pages, at least one) at a time, whatever the watermarks say, so
  // that the store takes it while the writer fills the cache and its close finds little left to
  // drain. Random writes stay in the cache. 0: streams wait for the watermarks or the close.
  std::uint64_t write_back_stream_bytes = 8ULL << 20;
  // write-back: the flusher's batches go to the backing file in pieces, and stop between two of
  // them for an fsync, close or truncate waiting for the file, which then waits for one piece
  // instead of a batch (8.4 ms at 1 Gbit/s, where an 8 MiB batch held an fsync 157-186 ms with
  // its sync and stats). A piece is sized to take about 10 ms at the store's pace, and is never
  // smaller than this many bytes (rounded down to whole pages, at least one). A drain writes
  // each run whole.
  std::uint64_t write_back_piece_bytes = 1ULL << 20;
  // write-back: a drain (a close, an fsync's write-back, the restart's) takes batches of this many
  // bytes of the file's lowest dirty pages (rounded down to whole pages, at least one), each read
  // from the chip while the one before goes to the backing file; a flusher's piece grows to
  // this at most.
  std::uint64_t write_back_drain_batch_bytes = 8ULL << 20;
  // write-back: a drain syncs the backing file once per this many bytes written (and at its end),
  // and marks clean what each sync covered: over sshfs a sync per 8 MiB batch cost 5 ms of 43.
  std::uint64_t write_back_drain_sync_bytes = 32ULL << 20;
  // write-back: 0 (the default) makes a file's close wait until the backing file holds what was
  // written (close-to-open). Otherwise the close returns once the dirty pages are durable in the
  // cache (as an fsync makes them) and the backing file has its size, and the flusher writes
  // them back at most this many milliseconds after the first close that left them (rclone's
  // --vfs-write-back): another client of the backing sees the data that much later, and an
  // error of that write-back reaches no close (it is logged; the pages stay dirty, tried again).
  std::uint32_t write_back_delay_ms = 0;
  // The engine commits (Engine::commit, doc/cache.md "Commit": the data of the writes not yet
  // finished is programmed out of the device RAM and one metadata page publishes them) at most
  // this many milliseconds after the oldest write to the cache (a fill, a rewrite) that no
  // commit covers yet, so that a power cut or a kill -9 keeps every page cached more than this
  // (plus the commit's own time) before it. 0: never by time (data leaves the device RAM only as
  // it fills or as commit_pending_bytes forces it, and a cut drops what it still held).
  std::uint32_t commit_interval_ms = 500;
  // When the data of the writes not yet finished (their pages still in the device RAM, their
  // confirmations not on the chip) reaches this many bytes, the write that reaches it commits
  // at once, under the cache lock: the most a cut can drop however fast data comes in, and the
  // most one commit programs. Rounded down to whole cache pages (at least one). 0: no bound.
  std::uint64_t commit_pending_bytes = 8ULL << 20;
  // How files are told apart (doc/daemon.md "File identity"); unset: by the backing (the path
  // rule where inode numbers are not stable, FUSE backings such as sshfs; the inode rule
  // elsewhere). A cache that changes rule drops its clean pages once.
  std::optional<IdentityRule> identity;

  Status validate() const;
  std::string to_json() const;
};

}  // namespace flashdir::cache
