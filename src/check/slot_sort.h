// Internal to src/check: the slots the metadata store keeps, sorted as the engine's restart
// sorts them (EngineCore::recover) and as fsck treats them (doc/fsck.md "What is an error"):
//   - slots of catalog files are kept; their dirty ones go back at the engine's next open;
//   - slots naming a file id the catalog does not know, below its next file id, are orphans
//     (a file unlinked while open): clean ones are dropped, dirty ones saved in lost+found;
//   - slots naming an id at or past its next file id belong to records the catalog lost (its
//     write-ahead log deleted, an older copy put back; with the catalog replaced, every id):
//     clean ones are dropped, dirty ones saved in lost+found;
//   - a dirty slot whose data the FTL cannot read has lost the only copy of its bytes,
//     whoever it belongs to: it is dropped and reported LOST.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cache/meta/metadata_store.h"
#include "flashdir/catalog.h"

namespace flashdir {

using CatalogFiles = absl::flat_hash_map<std::uint64_t, CatalogFile>;

// What the catalog says of the cache's files.
struct CatalogView {
  CatalogFiles files;
  // Ids at or past it were never given out by this catalog: it lost their records. 0 for a
  // catalog that names nothing (one fsck replaces).
  std::uint64_t next_file_id = 0;
};

struct DamagedDirtySlot {
  cache::SlotIndex slot = 0;
  cache::SlotEntry entry;
  std::string why;
};

struct SlotSort {
  std::uint64_t kept = 0;                                     // slots of catalog files the next open keeps
  std::map<std::uint64_t, std::uint64_t> dirty;               // of those, dirty: file id -> slots
  std::vector<cache::SlotIndex> orphans;                      // clean orphans
  std::map<std::uint64_t, std::vector<cache::RecoveredSlot>> orphan_dirty;  // readable dirty orphans, by file id
  std::vector<cache::SlotIndex> lost_clean;                   // clean slots of records the catalog lost
  std::map<std::uint64_t, std::vector<cache::RecoveredSlot>> lost_dirty;    // readable dirty ones, by file id
  std::map<std::uint64_t, std::uint64_t> lost_files;          // file id -> slots, records the catalog lost
  std::vector<DamagedDirtySlot> damaged;                      // dirty slots whose data cannot be read

  std::uint64_t dirty_slots() const;
  std::uint64_t orphan_dirty_slots() const;
  std::uint64_t lost_dirty_slots() const;
  // Every slot -y drops (after saving the dirty ones it can).
  std::vector<cache::SlotIndex> to_drop() const;
  bool anything_to_drop() const { return !orphans.empty() || !orphan_dirty.empty() || !lost_files.empty() || !damaged.empty(); }
};

// Sorts `recovered`, reading every usable dirty slot through `ftl` to find the damaged ones.
// Fails only when the FTL does (not with a corruption, which marks the slot damaged).
Result<SlotSort> sort_slots(const cache::RecoveredSlots& recovered, const CatalogView& catalog, Ftl& ftl,
                            const cache::SlotLayout& layout);

// Where a slot's page is, for messages: "page 3 of dir/f (file id 7, slot 12)".
std::string describe_page(const CatalogView& catalog, cache::SlotIndex slot, const cache::SlotEntry& entry);

}  // namespace flashdir
