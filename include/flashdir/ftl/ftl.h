// The flash translation layer: a logical page space over a NAND chip.
//
//   auto ftl = Ftl::open(chip, clock, options);        // recovery happens here
//   auto seq = ftl->write(Lpn(10), 4, data, WriteHint::none);
//   ftl->read(Lpn(10), 4, buffer);
//   ftl->flush();                                       // everything durable, incl. trims
//
// Requests are runs of consecutive LPNs, as a trace record or a FUSE request gives them; never
// split them into single pages above the FTL (the policies depend on request size).
//
// Durability contract (doc/ftl.md):
//  - write() returns the request's sequence number once its pages are programmed;
//    durable_seq() is the highest sequence number at or below which every write is on the chip
//    and will be found after a power cut.
//  - After a power cut, reopening yields a mapping that holds every write at or below the
//    durable watermark before the cut, and for no LPN a version older than its newest durable
//    one. A write in flight may or may not be there.
//  - A trim is durable once flush() returns after it; a power cut before that may bring the
//    trimmed data back (never anything older).
//  - A write with Durability::forced, and the pages make_durable() returns for, are on the chip
//    and found after a power cut as soon as the call returns, whatever durable_seq() says (it
//    is a prefix watermark: an older buffered write elsewhere holds it back).
//
// Lost pages: an LPN whose page fails verification on every read when garbage collection must
// move it, or whose mapping points at a page that recovery finds gone, is *lost*: its data is
// gone, and every read of it is a corruption error until it is written or trimmed (never
// zeros, never an older version). GC carries on past it. lost_lpns() lists them all (they
// survive power cuts and restarts); take_newly_lost_lpns() hands the ones lost since the last
// call (those recovery found included) to a cache that must drop what it kept there.
//
// Not thread-safe (read_prepared() excepted). After a chip error (power lost, I/O) every call fails; reopen the chip.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flashdir/clock.h"
#include "flashdir/ftl/options.h"
#include "flashdir/ftl/prepared_read.h"
#include "flashdir/ftl/stats.h"
#include "flashdir/nand/chip.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir {

namespace ftl {
class FtlCore;
}

// How the last open went, step by step (simulated time of the chip work each step did).
struct RecoveryReport {
  bool clean = false;                     // no change since the checkpoint: nothing to replay
  // Rolled forward from the checkpoint's block table, reading only the translation pages the
  // replayed pages touch (else, after a cut, rebuilt from the whole mapping; steps say why).
  bool moved_forward = false;
  std::uint64_t checkpoint_generation = 0;
  std::uint64_t scanned_blocks = 0;       // blocks whose pages were read during roll-forward
  std::uint64_t replayed_data_pages = 0;
  std::uint64_t replayed_translation_pages = 0;
  std::uint64_t damaged_pages = 0;        // torn or corrupt pages found and skipped
  std::uint64_t stale_versions = 0;       // pages skipped because a newer version was already mapped
  std::uint64_t dangling_mappings = 0;    // mappings into pages no longer programmed: those LPNs are lost
  std::uint64_t shared_pages = 0;         // physical pages claimed by two LPNs: the second is lost
  std::uint64_t unverified_mappings = 0;  // rebuild: mappings to pages that do not hold their LPN: lost
  std::uint64_t lost_lpns = 0;            // LPNs lost after the open, whenever they were lost
  std::vector<std::string> steps;         // "load checkpoint: 1.2 ms", ...
};

class Ftl {
 public:
  // Lays a fresh, empty FTL on the chip (erasing it) and writes the first checkpoint.
  static Result<std::unique_ptr<Ftl>> format(NandChip& chip, SimClock& clock, const FtlOptions& options);
  // Opens the FTL on the chip: loads the newest checkpoint and rolls forward if needed.
  // The mapping scheme and GC policy may differ from the ones it was formatted with.
  static Result<std::unique_ptr<Ftl>> open(NandChip& chip, SimClock& clock, const FtlOptions& options);
  // Rebuilds the FTL state from a scan of every page of the chip, ignoring checkpoints, and
  // writes a fresh checkpoint (fsck -y). The over-provisioning must be the format's.
  static Result<std::unique_ptr<Ftl>> rebuild(NandChip& chip, SimClock& clock, const FtlOptions& options);
  ~Ftl();
  Ftl(const Ftl&) = delete;
  Ftl& operator=(const Ftl&) = delete;

  std::uint64_t logical_pages() const;
  std::uint32_t page_size_bytes() const;
  // A logical block of CFTL's block mapping is this many consecutive LPNs from a multiple of it.
  std::uint32_t pages_per_block() const;
  // The logical pages an FTL would export on `geometry` with that spare share, or why the
  // geometry cannot hold an FTL.
  static Result<std::uint64_t> logical_pages_for(const Geometry& geometry, std::uint16_t overprovision_permille);
  // The least over-provisioning with which garbage collection can always make room on a full
  // device of `geometry` (a few spare blocks, so a larger share of a small chip). Below it a
  // full device may answer a write with "no space".
  static Result<std::uint16_t> minimum_overprovision_permille(const Geometry& geometry);

  // Reads `count` pages from `first` into data (count * page_size bytes). Unwritten and trimmed
  // pages read as zeros; a page failing its checksum is a corruption error. On a metadata-only
  // chip host data is not kept, so `data` may be empty (and is zero-filled otherwise).
  Status read(Lpn first, std::uint32_t count, ByteSpan data);
  // read() in three steps, the chip I/O in the middle one, which alone may run concurrently
  // with other calls (include/flashdir/ftl/prepared_read.h). finish_read() returns what read()
  // would have, and the statistics come out as read()'s; a prepared read must be finished
  // before the next call that prepares `read` (other calls may come in between).
  Status prepare_read(Lpn first, std::uint32_t count, ByteSpan data, PreparedRead& read);
  void read_prepared(PreparedRead& read, ByteSpan data) const;
  Status finish_read(PreparedRead& read, ByteSpan data);
  // Writes `count` pages; `data` is count * page_size bytes (may be empty on a metadata-only
  // chip). Returns the request's sequence number. A forced write bypasses the RAM buffer (and
  // drops any older buffered copy of its pages), as cache metadata that orders later writes needs.
  Result<std::uint64_t> write(Lpn first, std::uint32_t count, ConstByteSpan data, WriteHint hint = WriteHint::none,
                              Durability durability = Durability::buffered);
  // Programs whichever of the pages [first, first + count) still sit in the RAM buffer, so that
  // every completed write to them is on the chip; cheaper than flush(), which drains everything.
  Status make_durable(Lpn first, std::uint32_t count);
  Status trim(Lpn first, std::uint32_t count);
  // Makes every completed write and trim durable (and the chip image synced).
  Status flush();
  // Whether the next flush() writes a checkpoint (checkpoint_interval_pages programmed since the
  // last one): the roll-forward after a cut reads what was programmed since, so a caller that
  // keeps its writes durable by other means (make_durable) flushes when this says so.
  bool checkpoint_due() const;
  std::uint64_t durable_seq() const;
  // Flushes, writes a final checkpoint and syncs: the next open needs no recovery.
  Status close();

  FtlStats stats() const;
  // The options this FTL was handed by format(), open() or rebuild(): its mapping scheme, GC
  // policy and device RAM policy (the stats file names them). Fixed for its life, so safe to
  // read from any thread.
  const FtlOptions& options() const { return options_; }
  // How the device RAM is split right now (cheap, unlike stats()).
  struct RamSplit {
    std::uint64_t budget_bytes = 0;
    std::uint64_t mapping_bytes = 0;
    std::uint64_t buffer_bytes = 0;
    std::uint64_t mapping_partition_bytes = 0;  // the policy's mapping partition (tree: what it holds)
  };
  RamSplit ram_split() const;
  const RecoveryReport& recovery() const;
  // The generation of the newest checkpoint on the chip (loaded by open, or written since:
  // by recovery, a flush, close). A clean open finds the one the last close wrote.
  std::uint64_t checkpoint_generation() const;
  // Every lost LPN, ascending (see "Lost pages" above).
  std::vector<Lpn> lost_lpns() const;
  // The LPNs lost since the previous call (or the open), ascending; each is handed out once.
  std::vector<Lpn> take_newly_lost_lpns();

  ftl::FtlCore& core() { return *core_; }  // internals, for tests and fsck

 private:
  Ftl(std::unique_ptr<ftl::FtlCore> core, const FtlOptions& options);
  std::unique_ptr<ftl::FtlCore> core_;
  FtlOptions options_;
};

}  // namespace flashdir
