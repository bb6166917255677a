// Rebuilding the mapping from what the chip holds: the roll-forward of recovery (from a
// checkpoint) and fsck's rebuild from nothing (a full OOB scan) are the same replay with
// different starting points. Pure: it reads the chip and programs nothing.
//
// The replay applies, in program-sequence order, every verified page programmed after the
// starting point: a translation page sets the mapping of all its LPNs (its content is exact
// as of its sequence, doc/ftl.md); a data page maps its LPN unless a newer version is already
// mapped. Torn and corrupt pages are counted and skipped.
//
// Sparse (ReplayOptions::sparse, from a checkpoint): only the translation pages the replayed
// pages touch are read, and the checkpoint's content of each is kept beside the result, so that
// recovery can move the checkpoint's block table forward instead of rebuilding it from the
// whole map (ftl_roll_forward.cc).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <string>
#include <vector>

#include "block_table.h"
#include "checkpoint.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/chip.h"
#include "layout.h"

namespace flashdir::ftl {

struct Replayed {
  std::vector<std::uint32_t> map;          // LPN -> PPN for the whole logical space
  std::vector<std::uint32_t> gtd;          // TPN -> PPN of its newest translation page
  std::vector<std::uint64_t> dirty_tpns;   // translation pages whose flash content differs from `map`
  std::vector<bool> scanned;               // per block: its pages were read
  std::vector<BlockKind> scanned_kind;     // per scanned block: what its first verified page says
  std::vector<std::uint64_t> damaged_blocks;  // scanned blocks holding a page that fails verification
  std::uint64_t highest_sequence = 0;      // of any verified page read
  std::uint64_t highest_version = 0;       // of any data page applied
  std::uint64_t data_pages_applied = 0;
  std::uint64_t host_pages_seen = 0;       // data pages replayed, for the host clock
  RecoveryReport report;                   // scan and replay counts
  // Per block: its pages were programmed after an erase that followed the starting point (or
  // it holds no page whose record proves otherwise): what the checkpoint says of it is history.
  std::vector<bool> rewritten;
  // LPNs a data page mapped after their translation page's newest replayed version: the
  // entries that differ from flash once `gtd` is in force.
  std::vector<std::uint64_t> mapped_since_translation;
  // Sparse: the checkpoint's content of every translation page the replay touched (`map` holds
  // the replayed content of those pages only), or why a sparse replay could not be done (then
  // nothing else here is meaningful).
  absl::flat_hash_map<std::uint64_t, std::vector<std::uint32_t>> checkpoint_content;
  std::string not_sparse;
  // With ReplayOptions::record_page_owners: per physical page, the LPN a verified data page
  // holds, kTranslationOwner for a verified translation page, kUnmappedPpn otherwise.
  std::vector<std::uint32_t> page_owner;
};

inline constexpr std::uint32_t kTranslationOwner = 0xFFFFFFFEu;

struct ReplayOptions {
  bool record_page_owners = false;  // fsck: what every scanned page holds
  // Read and hash every scanned page's data (fsck); without it a page is judged by its record
  // alone, whose checksum a torn program breaks (the record lands last), and only the OOB of a
  // scanned data block is read: the FTL's own roll-forward, which then reads about a
  // sixty-fourth of the bytes. A data page the medium damaged after it was programmed whole is
  // then mapped, and its read fails its hash (as a read of any page the roll-forward did not
  // scan would), where with it the roll-forward maps its LPN as lost: neither serves older bytes.
  bool verify_data = true;
  // From a checkpoint: read only the translation pages replayed pages touch (see above).
  bool sparse = false;
};

// From `base` (a checkpoint) or, with nullptr, from an empty mapping over a scan of every page.
Result<Replayed> replay_mapping(NandChip& chip, const FtlLayout& layout, const CheckpointState* base,
                                const ReplayOptions& options = {});

}  // namespace flashdir::ftl
