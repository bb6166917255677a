// How an FTL is configured: mapping scheme, GC policy, over-provisioning, RAM for the mapping
// cache, checkpoint cadence, and CFTL's hot/cold detector. Every field has a unit and a
// default; validate() names the bad field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flashdir/format.h"
#include "flashdir/status.h"

namespace flashdir {

// CFTL's page->block conversions that copy data.
enum class ConsolidationMode : std::uint8_t {
  off,    // none: only blocks already laid out whole are converted
  gc,     // during GC, when the victim holds at least half of the logical block
  eager,  // during GC whatever the share, and in the background after reads (the paper's and more)
};
std::string_view consolidation_mode_name(ConsolidationMode mode);
Result<ConsolidationMode> parse_consolidation_mode(std::string_view text);

// CFTL's detector for page->block conversion (doc/ftl.md, "hot/cold detector"): per logical
// block, a read counter and a write counter, both halved every aging period.
struct CftlOptions {
  // A logical block is read-hot once its decayed read count reaches this many page reads;
  // 0 means pages_per_block / 2.
  std::uint32_t read_hot_threshold = 0;
  // Host requests per aging step (counters halve); 0 means 4 x pages_per_block.
  std::uint64_t aging_period_requests = 0;
  // Share of the mapping cache given to the CBMT, in percent.
  std::uint32_t cbmt_share_percent = 10;
  // When to copy a read-hot, write-cold logical block into one physical block (doc/ftl.md).
  // Blocks found laid out whole are block-mapped for free in every mode.
  ConsolidationMode consolidation = ConsolidationMode::gc;
};

// The device RAM: one budget shared by the mapping cache and a data write buffer
// (doc/ram.md). The policy decides the split:
//   tree    TreeFTL (papers/treeftl.txt): translation pages and the data pages they map, cached
//           together and evicted by LRU caching group; the split follows the workload by itself
//   stack   tree with each group's translation state in CFTL's compact form: runs of the page
//           rather than the whole page until the group shows its page is used (doc/ram.md)
//   aps     APS (papers/aps-adaptive-partitioning.txt): an entry cache and an LRU buffer whose
//           sizes move every interval by a cost-benefit comparison of two ghost caches
//   static  a fixed share for mapping (`static_mapping_percent`), the rest for data (JTL-like)
struct RamOptions {
  format::RamPolicy policy = format::RamPolicy::stack;  // the default: bench/reproduce/README.md says why
  std::uint64_t budget_bytes = 64 << 10;
  std::uint8_t static_mapping_percent = 50;     // static: share of the budget for mapping
  std::uint64_t aps_interval_requests = 1000;   // aps: requests between repartitions
  std::uint64_t aps_tune_unit_bytes = 0;        // aps: the smallest step of the split; 0: 1/256 of the RAM (at least an entry)
  std::uint32_t ram_page_op_ns = 2000;          // time of one page moved into or out of RAM (the papers' 2 us)
  // tree: GC's moves into uncached translation pages wait in a relocation log instead of
  // loading each page (doc/ram.md "GC's mapping updates"). Off by default: under Dual Greedy
  // it costs programs (financial1-head: 28,033 -> 38,914), though it saves them under greedy.
  bool tree_relocation_log = false;

  Status validate() const;
};

// "tree", "stack", "aps", "static:P" (P a percentage for mapping, e.g. static:50).
Status parse_ram_policy(std::string_view text, RamOptions& options);
std::string ram_policy_label(const RamOptions& options);

struct FtlOptions {
  format::MappingScheme mapping = format::MappingScheme::cftl;
  format::GcPolicy gc = format::GcPolicy::dual_greedy;
  // Spare space as a share of the data area, in per mille; fixed at format time (open reads
  // it from the checkpoint).
  std::uint16_t overprovision_permille = 70;
  RamOptions ram;
  // Pages programmed since the last checkpoint before flush() writes a new one; 0 means
  // automatic (1/32 of the chip, at least one block).
  std::uint64_t checkpoint_interval_pages = 0;
  CftlOptions cftl;
  // For regression tests only: serve CFTL writes the paper's way (Algorithm 1 leaves the
  // CBMT entry of a written block in place), which returns stale data on the next read.
  bool reproduce_paper_cbmt_bug = false;

  Status validate() const;
};

enum class WriteHint : std::uint8_t {
  none,  // let the GC policy classify (Dual Greedy's page lifetimes)
  hot,   // the caller knows the data will be rewritten soon
  cold,
};

// Where a write may be when write() returns.
enum class Durability : std::uint8_t {
  buffered,  // possibly only in the device RAM: durable once durable_seq() covers it
  forced,    // programmed on the chip, bypassing the RAM buffer: found after a power cut
};

}  // namespace flashdir
