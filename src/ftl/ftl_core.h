// The FTL proper: write frontiers, programming, garbage collection, checkpoints and recovery,
// over a NandChip, with a Mapper for translation and a GcPolicy for victims. The public face
// is flashdir::Ftl (include/flashdir/ftl/ftl.h); doc/ftl.md explains the design.
//
// Not thread-safe: the owner serialises calls. After a chip error (a power cut, an I/O error)
// the core refuses every further call with that error: its RAM state may be half-updated, and
// only reopening the chip (recovery) is safe.
#pragma once

#include <array>
#include <map>
#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "block_table.h"
#include "checkpoint.h"
#include "flashdir/clock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/ftl/prepared_read.h"
#include "flashdir/nand/chip.h"
#include "gc_policy.h"
#include "layout.h"
#include "ftl/ram/ram_manager.h"
#include "mapper.h"
#include "replay.h"

namespace flashdir::ftl {

// Where a page being programmed comes from; each stream has its own frontier block.
enum class Stream : std::uint8_t { hot = 0, cold = 1, gc = 2, translation = 3, consolidation = 4 };
inline constexpr std::size_t kStreamCount = 5;
BlockKind block_kind_of(Stream stream);

// One page to program: its record and, where the chip keeps data, its bytes.
struct PageToProgram {
  format::PageKind kind = format::PageKind::data;
  std::uint64_t logical_number = 0;
  std::uint64_t version = 0;
  Stream stream = Stream::cold;
  ConstByteSpan data;  // page_size bytes, or empty (metadata-only chip, host data)
};

// collect_data_block's buffers, kept between victims so that GC allocates nothing per run.
struct GcScratch {
  std::vector<std::uint8_t> data;  // the victim's page data, where the chip keeps data
  std::vector<std::uint8_t> oob;
  std::vector<format::OobRecord> records;
  std::vector<std::uint64_t> lbns;
  std::vector<PageToProgram> moves;
  std::vector<Ppn> from;
  std::vector<Ppn> placed;
  std::vector<Relocation> relocations;
};

class FtlCore final : public TranslationPages {
 public:
  // `latency` is the chip's, for the RAM policy's cost model (the chip hides it).
  FtlCore(NandChip& chip, SimClock& clock, const FtlOptions& options, const FtlLayout& layout,
          const LatencyProfile& latency);
  ~FtlCore() override;

  // Lays a fresh FTL on the chip (erasing whatever is there) and writes the first checkpoint.
  Status format();
  // Loads the newest checkpoint and, if the chip changed after it, rolls forward.
  Status open();
  // Rebuilds everything from a scan of every page and writes a fresh checkpoint (fsck -y).
  Status rebuild_from_scan();

  Status read(Lpn first, std::uint32_t count, ByteSpan data);
  // read() in three steps (host_reads.cc, include/flashdir/ftl/prepared_read.h); only
  // read_prepared() may run concurrently with other calls.
  Status prepare_read(Lpn first, std::uint32_t count, ByteSpan data, PreparedRead& read);
  void read_prepared(PreparedRead& read, ByteSpan data) const;
  Status finish_read(PreparedRead& read, ByteSpan data);
  Result<std::uint64_t> write(Lpn first, std::uint32_t count, ConstByteSpan data, WriteHint hint,
                              Durability durability);
  Status make_durable(Lpn first, std::uint32_t count);
  Status trim(Lpn first, std::uint32_t count);
  Status flush();
  bool checkpoint_due() const { return programs_since_checkpoint_ >= checkpoint_interval_pages_; }
  Status close();
  std::uint64_t durable_sequence() const { return durable_sequence_; }
  FtlStats stats() const;
  const RecoveryReport& recovery_report() const { return recovery_; }
  std::uint64_t checkpoint_generation() const { return checkpoint_generation_; }
  const std::set<std::uint64_t>& lost_lpns() const { return lost_lpns_; }
  std::vector<Lpn> take_newly_lost_lpns();
  const FtlLayout& layout() const { return layout_; }

  // TranslationPages, for the mapper.
  Status read(std::uint64_t tpn, std::span<std::uint32_t> entries) override;
  Status write(std::uint64_t tpn, std::span<const std::uint32_t> entries) override;
  void charge_to_gc(bool gc) override { charge_to_gc_ = gc; }

  // For tests and fsck.
  NandChip& chip() { return chip_; }
  const BlockTable& blocks() const { return blocks_; }
  GcPolicy& gc_policy() { return *policy_; }
  ram::RamManager& ram() { return *ram_; }
  const ram::RamManager& ram() const { return *ram_; }
  const std::vector<std::uint32_t>& gtd() const { return gtd_; }

 private:
  // ---- common guards
  Status check_alive() const { return failed_; }
  Status fail(Status s);
  Status check_range(const char* operation, Lpn first, std::uint32_t count) const;

  // ---- space: allocation.cc
  // Programs `pages` at the frontiers of their streams; placed[i] receives where pages[i] went.
  Status program(std::span<const PageToProgram> pages, std::span<Ppn> placed);
  Result<BlockNumber> open_frontier(Stream stream);
  void close_block(BlockNumber block);
  Status erase_block(BlockNumber block);
  void invalidate(Ppn page);
  void add_free_block(BlockNumber block);
  std::uint64_t free_blocks() const { return free_blocks_.size(); }
  // Blocks the `stream` frontier must open to take `pages` more pages.
  std::uint64_t blocks_needed(Stream stream, std::uint64_t pages) const;
  // Which dirty translation pages the free space must also cover: those the RAM budget can
  // force out at any request, or all of them (a flush or checkpoint writes them back).
  enum class TranslationRoom { evictable, all };
  // Collects victims until `needed` free blocks are available beyond the GC reserve and the
  // blocks that the dirty translation pages in `room` will take.
  Status ensure_free_blocks(std::uint64_t needed, TranslationRoom room = TranslationRoom::evictable);
  std::uint64_t translation_blocks_pending(TranslationRoom room) const;
  // Before the first change to the chip after a checkpoint: write its marker.
  Status note_chip_change();

  // ---- lost pages: ftl_core.cc (doc/ftl.md, "Lost pages")
  // Records that `lpn`'s data is gone; the caller maps it to kLostPpn. A write or trim of the
  // LPN takes it off the list.
  void note_lost(Lpn lpn);

  // ---- garbage collection: gc.cc
  Status collect(BlockNumber victim);
  Status collect_translation_block(BlockNumber victim);
  Status collect_data_block(BlockNumber victim);
  // The LPN whose mapping holds `page`, a valid data page failing verification (read as `record`).
  Result<Lpn> lpn_of_valid_page(Ppn page, const Result<format::OobRecord>& record);
  Status consolidate(std::uint64_t lbn);
  Status persist_trims();
  // Every dirty cached mapping entry to its translation page, GC first making room for them.
  Status write_back_mapping();

  // ---- checkpoints and recovery: ftl_checkpoint.cc, ftl_recovery.cc
  CheckpointState snapshot() const;
  Status write_checkpoint();
  void restore(const CheckpointState& state);
  Status recover(const CheckpointSlots::Loaded& loaded);
  // Takes over a replayed mapping: block table, validity, policy, then a fresh checkpoint.
  Status adopt(Replayed replayed, const CheckpointState* base, std::uint64_t checkpoint_highest_sequence,
               std::uint64_t started_ns);
  // Takes over a sparse replay from `loaded`, with the validity bitmap proven from its own.
  Status adopt_forward(Replayed replayed, const CheckpointSlots::Loaded& loaded, std::vector<std::uint64_t> validity,
                       std::uint64_t started_ns);
  // Block states after a replay: what the chip holds, with `base`'s history where unchanged.
  void restore_block_states(const Replayed& replayed, const CheckpointState* base);
  // GC policy, free list, sequence counters and host clock after a replay.
  void resume_after_replay(const Replayed& replayed, const CheckpointState* base,
                           std::uint64_t checkpoint_highest_sequence);
  void rebuild_policy_and_free_list();
  Status install_ram();

  // ---- host reads: host_reads.cc
  // Where pages [first, first + count) are: buffered ones are copied into `data`, unmapped ones
  // zeroed, the others appended to `runs` (physically consecutive pages together, `index`
  // counted from `first`), up to the first lost page, which is returned (count: none).
  Result<std::uint32_t> resolve_read(Lpn first, std::uint32_t count, ByteSpan data, std::vector<PreparedRead::Run>& runs);
  // Why the `count` pages read from `ppn` into `data` and `oob` are not the newest copies of
  // LPNs [first, first + count) (empty: they are). Const, for read_prepared().
  std::string verify_run(Lpn first, std::uint32_t count, std::uint32_t ppn, ConstByteSpan data, ConstByteSpan oob) const;
  // Reads and verifies a run with up to kReadAttempts tries; a corruption error if it keeps failing.
  Status read_run(Lpn first, std::uint32_t count, std::uint32_t ppn, ByteSpan data);
  // Whether no block of `run` was erased since `read` was prepared.
  bool blocks_unchanged(const PreparedRead& read, const PreparedRead::Run& run) const;
  // Pages [first, first + count) resolved and read afresh (a prepared run whose blocks GC erased).
  Status reread(Lpn first, std::uint32_t count, ByteSpan data);

  // ---- host requests: host_requests.cc
  struct HostPage {
    Lpn lpn;
    std::uint64_t version = 0;
    ConstByteSpan data;  // empty on a metadata-only chip
    WriteHint hint = WriteHint::none;
  };
  // Programs host pages (a write that bypasses RAM, or buffered pages leaving it) in chunks of
  // at most a block: for each, GC first, then the pages, then the mapping.
  Status program_host_pages(std::span<const HostPage> pages);
  Status program_host_chunk(std::span<const HostPage> pages);
  Status program_buffered(std::span<const ram::BufferedPage> pages);
  // Evicts until the RAM budget holds again, programming the data pages it gives back.
  Status settle();
  // The durable watermark: every write at or below it is on the chip.
  std::uint64_t watermark() const;
  void hold(std::uint64_t version) { ++buffered_versions_[version]; }
  void release(std::uint64_t version);
  // Per-request bookkeeping: RAM time, the RAM split, service time.
  void finish_request(std::uint64_t started_ns);

  NandChip& chip_;
  SimClock& clock_;
  FtlOptions options_;
  LatencyProfile latency_;
  FtlLayout layout_;
  CheckpointSlots slots_;
  BlockTable blocks_;
  std::unique_ptr<GcPolicy> policy_;
  std::unique_ptr<ram::RamManager> ram_;
  std::map<std::uint64_t, std::uint32_t> buffered_versions_;  // pending_since -> buffered pages with it
  std::vector<std::uint64_t> trimmed_pending_;  // holds of buffered pages trimmed before the next flush
  std::uint64_t ram_page_ops_ = 0;
  // Scratch buffers of the request paths, kept to avoid allocating per request.
  std::vector<std::uint8_t> program_data_, program_oobs_, read_oobs_, translation_data_, translation_oob_;
  std::vector<std::uint32_t> read_ppns_, old_ppns_;
  std::vector<bool> read_buffered_;
  PreparedRead plain_read_;  // read()'s
  std::vector<PageToProgram> host_programs_;
  std::vector<Ppn> host_placed_;
  std::vector<HostPage> host_pages_;              // program_buffered's, a bypassing write's
  std::vector<ram::BufferedPage> evicted_pages_;  // settle's
  GcScratch gc_scratch_;
  std::vector<std::uint32_t> gtd_;
  std::array<std::optional<BlockNumber>, kStreamCount> frontiers_;
  // (erase count, block), least worn on top: a heap in one vector, since an open rebuilds it
  // with every free block of the chip (a std::set, a node per block, took 40% of the FTL's
  // clean open of an empty 16 GiB cache: 0.010 s against 0.006).
  std::priority_queue<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::pair<std::uint32_t, std::uint64_t>>,
                      std::greater<>>
      free_blocks_;

  std::uint64_t next_sequence_ = 1;     // program sequence of the next page
  std::uint64_t write_sequence_ = 0;    // last sequence handed to a host write
  std::uint64_t durable_sequence_ = 0;
  HostTime host_time_ = 0;              // host pages written

  // Checkpoint bookkeeping.
  int checkpoint_slot_ = 0;
  std::uint64_t checkpoint_generation_ = 0;
  std::uint32_t checkpoint_pages_ = 0;
  bool marker_pending_ = false;
  std::uint64_t programs_since_checkpoint_ = 0;
  std::uint64_t checkpoint_interval_pages_ = 0;

  // Trims live in dirty mapping entries until their translation page is written; a block
  // holding a page invalidated by such a trim must not be erased before that (doc/ftl.md).
  std::set<std::uint64_t> unpersisted_trim_tpns_;
  std::set<std::uint64_t> blocks_with_unpersisted_trims_;

  // LPNs mapped to kLostPpn, and those of them not yet handed out by take_newly_lost_lpns().
  std::set<std::uint64_t> lost_lpns_;
  std::set<std::uint64_t> newly_lost_lpns_;

  bool in_gc_ = false;
  bool in_collect_ = false;     // collecting a victim: translation-page I/O is GC's
  bool charge_to_gc_ = false;   // a scheme writing back what only GC dirtied
  std::uint64_t requests_since_consolidation_ = 0;
  Status failed_;
  FtlStats stats_;
  ChipCounters chip_at_start_;
  RecoveryReport recovery_;
};

}  // namespace flashdir::ftl
