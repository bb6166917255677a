// The device RAM as the FTL sees it (doc/ram.md): translation through whatever mapping state
// the policy keeps in RAM, a write buffer for data, and one budget over both. The policy
// decides what stays and what goes; the FTL does every flash operation: translation-page I/O
// through TranslationPages, and programming the data pages evict() and drain() hand back.
//
// Budget: usage().total() <= usage().budget_bytes holds whenever evict() has given back nothing
// (the FTL checks it at the end of every request). Between, a run of relocations may load
// mapping state beyond it.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ftl/layout.h"
#include "ftl/mapper.h"
#include "buffered_page.h"
#include "flashdir/ftl/options.h"
#include "flashdir/ftl/stats.h"

namespace flashdir::ram {

using ftl::Access;
using ftl::Relocation;
using ftl::TranslationPages;

struct RamUsage {
  std::uint64_t budget_bytes = 0;
  std::uint64_t mapping_bytes = 0;  // cached mapping: entries, translation pages, CBMT
  std::uint64_t buffer_bytes = 0;   // buffered data pages
  std::uint64_t ghost_bytes = 0;    // APS's ghost caches
  // What the policy gives mapping: its partition (aps, static) or, for tree, what it holds.
  std::uint64_t mapping_partition_bytes = 0;
  std::uint64_t total() const { return mapping_bytes + buffer_bytes + ghost_bytes; }
};

class RamManager {
 public:
  virtual ~RamManager() = default;

  // ---- Translation (the contract of ftl::Mapper, whose schemes the policies build on).
  virtual Result<std::uint32_t> lookup(Lpn lpn, Access access) = 0;
  virtual void set(Lpn lpn, std::uint32_t ppn) = 0;
  virtual Status relocate(std::span<const Relocation> moves) = 0;
  virtual Status write_back(std::uint64_t tpn) = 0;
  virtual Status write_back_all() = 0;
  virtual std::uint64_t dirty_translation_pages() const = 0;
  virtual void merge_dirty(std::uint64_t tpn, std::span<std::uint32_t> entries) = 0;
  virtual void note_access(Lpn first, std::uint32_t count, Access access) = 0;
  virtual bool wants_block_mapping(std::uint64_t lbn) const = 0;
  virtual std::optional<std::uint64_t> consolidation_candidate() = 0;
  virtual void register_block_mapping(std::uint64_t lbn, BlockNumber block) = 0;
  // Mapper::register_laid_out_blocks, from whatever mapping state the policy holds.
  virtual void register_laid_out_blocks() = 0;

  // ---- The write buffer.
  // Whether a host write of `count` pages goes through the buffer; longer ones (sequential
  // streams) go straight to flash.
  virtual bool buffers_write(std::uint32_t count) const = 0;
  // The buffered page of `lpn` (a read hit), or nullptr (a miss).
  virtual const BufferedPage* find(Lpn lpn) = 0;
  // Buffers a page written by the host. If it replaces a buffered page, it inherits that
  // page's pending_since, which is returned.
  virtual Result<std::optional<std::uint64_t>> put(BufferedPage page) = 0;
  // Forgets the buffered page of `lpn` (trimmed, or overtaken by a write that bypasses RAM);
  // returns its pending_since.
  virtual std::optional<std::uint64_t> drop(Lpn lpn) = 0;

  // ---- The budget.
  // Evicts until the budget holds: mapping state is written back here, data pages are handed
  // back in `victims` (cleared first; the caller's buffer, so that eviction allocates nothing)
  // for the FTL to program (then set()). Call again until it hands back nothing.
  virtual Status evict(std::vector<BufferedPage>& victims) = 0;
  // Every buffered page, for flush().
  virtual std::vector<BufferedPage> drain() = 0;
  virtual RamUsage usage() const = 0;

  // ---- Feedback for adaptive policies.
  virtual void end_request() {}
  virtual void note_gc(bool translation_block, std::uint64_t chip_ns) {
    (void)translation_block;
    (void)chip_ns;
  }
};

// The configured policy over the configured mapping scheme. `latency` is the chip's, for
// APS's cost model.
// (The `page` scheme's whole map is read from the translation pages here.)
Result<std::unique_ptr<RamManager>> make_ram_manager(const ftl::FtlLayout& layout, const FtlOptions& options,
                                                     const LatencyProfile& latency, TranslationPages& pages,
                                                     FtlStats& stats);
// A manager without buffer over a whole map in RAM, for recovery: `map` is the replayed
// mapping and `dirty_tpns` the translation pages that differ from it on flash.
Result<std::unique_ptr<RamManager>> make_recovery_ram(const ftl::FtlLayout& layout, TranslationPages& pages,
                                                      FtlStats& stats, std::vector<std::uint32_t> map,
                                                      std::vector<std::uint64_t> dirty_tpns);

}  // namespace flashdir::ram
