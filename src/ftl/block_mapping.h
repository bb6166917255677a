// CFTL's block mapping (papers/cftl.txt 3.1-3.2): the CBMT, the hot/cold detector that decides
// which logical blocks deserve it, and the queue of logical blocks waiting for consolidation.
// Shared by every RAM policy that runs the `cftl` scheme; a disabled instance (other schemes)
// answers "no block mapping" to everything.
//
// The CBMT is a cache of a fact the translation pages also hold, so dropping an entry loses
// nothing; registering one must only happen when flash (with no dirty entry overriding it)
// shows the logical block laid out whole.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "mapcache/cbmt.h"
#include "flashdir/ftl/options.h"
#include "flashdir/ftl/stats.h"
#include "hot_cold_detector.h"
#include "layout.h"
#include "mapper.h"

namespace flashdir::ftl {

class BlockMapping {
 public:
  static constexpr std::uint32_t kEntryBytes = 8;  // LBN + PBN

  BlockMapping(bool enabled, const FtlLayout& layout, const FtlOptions& options, std::uint64_t cbmt_bytes,
               FtlStats& stats);

  bool enabled() const { return enabled_; }
  // The PPN of `lpn` if its logical block is block-mapped. A write or trim drops the block
  // mapping first (the paper's Algorithm 1 does not, and reads stale data; see doc/ftl.md),
  // and so never hits.
  std::optional<std::uint32_t> lookup(Lpn lpn, Access access);
  // The mapping of `lpn` changes (write, trim, relocation): its logical block is page-mapped now.
  void page_mapped(Lpn lpn);

  // A host request's accesses, for the detector; a read that makes a logical block wanted
  // also queues it for register_laid_out().
  void note_access(Lpn first, std::uint32_t count, Access access);
  bool wants(std::uint64_t lbn) const;
  std::optional<std::uint64_t> candidate();
  void add(std::uint64_t lbn, BlockNumber block);

  // Registers, for free, every read-hot, write-cold logical block that `entries` (the content
  // of the translation page starting at `first_lpn`) shows laid out whole, unless
  // `overridden(lbn)` says RAM holds newer mappings for some of its pages.
  void register_aligned(std::uint64_t first_lpn, std::span<const std::uint32_t> entries,
                        const std::function<bool(std::uint64_t lbn)>& overridden);

  // The mapping of `lpn` that device RAM holds now (nullopt: not held); never reads flash.
  using HeldMapping = std::function<std::optional<std::uint32_t>(Lpn)>;
  // After a read's lookups: registers, for free, each logical block the read made wanted that
  // `held` shows laid out whole. One it shows laid out otherwise is remembered (a bit per
  // logical block) until one of its pages is mapped anew, so later reads do not look again;
  // one whose pages RAM does not all hold is looked at again at its next read. Translation
  // pages loaded whole are looked at by register_aligned(); this finds the blocks that become
  // read-hot after their page was loaded, which a page cached for good never shows again.
  void register_laid_out(const HeldMapping& held);

  std::uint64_t bytes_used() const { return cbmt_.size() * kEntryBytes; }

 private:
  enum class Layout { whole, scattered, unknown };
  // How `lbn` lies on flash as far as `held` shows; `block` receives its block when whole.
  Layout layout_of(std::uint64_t lbn, const HeldMapping& held, BlockNumber& block) const;

  bool enabled_;
  bool paper_bug_;
  const FtlLayout& layout_;
  FtlStats& stats_;
  Cbmt cbmt_;
  HotColdDetector detector_;
  std::deque<std::uint64_t> candidates_;
  std::set<std::uint64_t> candidate_set_;
  std::vector<std::uint64_t> unchecked_;  // made wanted by the current read
  std::vector<bool> scattered_;           // by logical block: seen not laid out whole since last mapped
};

}  // namespace flashdir::ftl
