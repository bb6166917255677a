// Which file page each cache slot holds, the index from file page to slot, the dirty pages,
// and CLOCK replacement over the slots (doc/cache.md "Slots and replacement").
//
// A slot is one data LPN of the FTL (SlotLayout::data_lpn). The slot's key (file id, page
// number) lives once, in its metadata entry in the MetadataStore: the table reads it from
// there and keeps, per slot, one byte of flags, and per file with cached pages a FilePages
// table of slot numbers (the index) and its dirty count. So every page of a file, or every
// dirty page of it, is found from the file's table, never by scanning the slots; the flusher
// finds files with dirty pages in a queue. Not thread-safe: the engine holds its cache lock.
//
// Order with the store: a slot enters the table once its entry is in the store
// (MetadataStore::before_data_write, or recovery) and leaves it before the store drops the
// entry, since the index reads page numbers from the entries.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cache/file_pages.h"
#include "cache/meta/metadata_store.h"
#include "cache/restart_image.h"
#include "cache/zeroed_array.h"

namespace flashdir::cache {

struct SlotKey {
  std::uint64_t file_id = 0;
  std::uint64_t page_no = 0;
  bool operator==(const SlotKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H state, const SlotKey& key) {
    return H::combine(std::move(state), key.file_id, key.page_no);
  }
};

class SlotTable {
 public:
  // Keys are read from `store`'s entries, which must outlive the table.
  explicit SlotTable(const MetadataStore& store);

  std::uint32_t capacity() const { return static_cast<std::uint32_t>(flags_.size()); }
  // Slots holding a page. After a restart from an image, moved by what its store's chunks read
  // from the chip held against the image (MetadataStore::image_entries_change): the count
  // taken from the image never saw those slots change here.
  std::uint32_t used() const { return static_cast<std::uint32_t>(used_ + store_.image_entries_change()); }
  // The slot holding page `page_no` of `file_id`, if cached.
  std::optional<SlotIndex> find(std::uint64_t file_id, std::uint64_t page_no) const;
  bool occupied(SlotIndex slot) const { return (flag(slot) & kOccupied) != 0; }
  // The page an occupied slot holds.
  SlotKey key(SlotIndex slot) const { return {store_.file_id_of(slot), store_.page_no_of(slot)}; }

  // `slot` (free) now holds the page its store entry names, which was not cached. A new page
  // starts unreferenced: CLOCK gives it one sweep of the hand to be read again.
  void insert(SlotIndex slot);
  // A restart: the empty table takes the recovered `slots` at once, all unreferenced and clean.
  // Two may name the same file page (MetadataStore::find_duplicates finds them meanwhile): the
  // caller removes one of each pair before anything looks a page up.
  void load(std::span<const RecoveredSlot> slots);
  void remove(SlotIndex slot);
  // Removes every slot of `slots` (occupied, each once): a file that loses more than a
  // sixteenth of its cached pages has its index rebuilt once from those it keeps
  // (FilePages::retain), where one erase per slot would cost a shift along its cluster each.
  void remove(std::span<const SlotIndex> slots);
  // A hit: the hand passes this slot once before evicting it.
  void reference(SlotIndex slot) { flag(slot) |= kReferenced; }

  bool dirty(SlotIndex slot) const { return (flag(slot) & kDirty) != 0; }
  std::uint32_t dirty_count() const { return dirty_count_; }
  // The page was (re)written and is newer than the backing file; a flush in progress of it no
  // longer covers it.
  void set_dirty(SlotIndex slot);
  // The flusher starts writing `slot` back.
  void set_flushing(SlotIndex slot) { flag(slot) |= kFlushing; }
  // True if `slot` was not rewritten since set_flushing (it is then clean).
  bool finish_flush(SlotIndex slot);
  // The flusher stopped before writing `slot` back: it stays dirty, and no longer in flight.
  void cancel_flush(SlotIndex slot) { flag(slot) &= static_cast<std::uint8_t>(~kFlushing); }
  // How many of `file_id`'s slots are dirty.
  std::uint32_t dirty_count_of(std::uint64_t file_id) const {
    const FileSlots* file = file_slots(file_id);
    return file == nullptr ? 0 : file->dirty;
  }
  // Up to `max` dirty slots of `file_id`; successive calls go on round the file's table.
  std::vector<SlotIndex> dirty_slots_of(std::uint64_t file_id, std::size_t max = SIZE_MAX);
  // A file with dirty pages, each in turn; 0 if none.
  std::uint64_t next_dirty_file();

  // The slot the next page goes into: the next free slot from the hand while a sixteenth of the
  // slots is free, else a free slot where the hand stands or the CLOCK victim (occupied: the
  // caller evicts it). Dirty slots are never victims; none is returned when every slot is
  // dirty. The hand moves on, so consecutive calls on a cold cache give consecutive slots — the
  // runs the FTL wants.
  std::optional<SlotIndex> next_for_insert();
  // The slots of `file_id` holding pages from `from_page` on.
  std::vector<SlotIndex> slots_of(std::uint64_t file_id, std::uint64_t from_page = 0) const;

  // RAM this table holds, measured from its containers.
  std::size_t ram_bytes() const;

  // The table's part of a restart image (cache/restart_image.h): every file's page table as it
  // is, each a part of the image, and in the index the slots used and where each file's table
  // lies. Which slots are occupied is not saved: the store's entries say. No page is dirty (a
  // clean close wrote them all back); CLOCK starts afresh (every page unreferenced, the hand
  // at the first slot), as after a restart from the metadata pages. slot_table_image.cc.
  Result<std::vector<std::uint8_t>> save_image(RestartImageWriter& parts) const;
  // Takes the index save_image wrote into this empty table, whose store restore_image made
  // from the same image, or says why it cannot be one (then the table is left empty). Each
  // chunk of slots learns which are occupied, from the store, when one of them is first
  // touched; each file's page table is read when the file is first looked up, and checked
  // against the store's entries (one that fails is rebuilt from them).
  Status restore_image(std::shared_ptr<const RestartImage> image, LittleEndianReader& index);
  // Page tables an image held that failed their check and were rebuilt from the entries.
  std::uint64_t image_tables_damaged() const { return image_tables_damaged_; }
  // The files with cached pages.
  std::vector<std::uint64_t> file_ids() const;

 private:
  struct FileSlots {
    FilePages pages;
    std::uint32_t dirty = 0;
    bool queued = false;  // in dirty_files_
  };
  auto page_of() const {
    return [this](SlotIndex slot) { return store_.page_no_of(slot); };
  }

  // What a restart image still holds (restore_image): chunks of slots whose flags are not set
  // from the store yet, and the page tables not read yet. Dropped once all are in.
  struct ImageTables {
    std::shared_ptr<const RestartImage> image;
    std::vector<bool> flags_set;  // by chunk of kFlagChunkSlots
    std::size_t chunks_left = 0;
    absl::flat_hash_map<std::uint64_t, ImagePart> files;
  };
  static constexpr std::uint32_t kFlagChunkSlots = 8192;
  // Every access to a slot's flags or a file's record goes through these, so that what is
  // still in the image is read first (logically const: the table fills in what it holds).
  std::uint8_t flag(SlotIndex slot) const {
    if (image_ != nullptr) [[unlikely]] set_flags_of(slot);
    return flags_[slot];
  }
  std::uint8_t& flag(SlotIndex slot) {
    if (image_ != nullptr) [[unlikely]] set_flags_of(slot);
    return flags_[slot];
  }
  const FileSlots* file_slots(std::uint64_t file_id) const {
    if (image_ != nullptr) [[unlikely]] load_table_of(file_id);
    const auto it = files_.find(file_id);
    return it == files_.end() ? nullptr : &it->second;
  }
  FileSlots* file_slots(std::uint64_t file_id) {
    return const_cast<FileSlots*>(static_cast<const SlotTable*>(this)->file_slots(file_id));
  }
  void set_flags_of(SlotIndex slot) const;
  void load_table_of(std::uint64_t file_id) const;
  // A file's page table read from the image and checked; if it fails, it and every table still
  // in the image are rebuilt from the store's entries, in one pass over the slots.
  void load_table(std::uint64_t file_id, const ImagePart& part);
  Result<FilePages> read_table(std::uint64_t file_id, const ImagePart& part);
  void rebuild_tables(std::vector<std::uint64_t> file_ids);
  void drop_image_if_done();
  // The slot the hand stands on; the hand moves to the next.
  SlotIndex advance_hand();

  // kLeaving: only within remove(span), a slot whose file's index is about to be rebuilt.
  static constexpr std::uint8_t kOccupied = 1, kReferenced = 2, kDirty = 4, kFlushing = 8, kLeaving = 16;
  const MetadataStore& store_;
  ZeroedArray<std::uint8_t> flags_;
  absl::flat_hash_map<std::uint64_t, FileSlots> files_;
  std::unique_ptr<ImageTables> image_;
  std::uint64_t image_tables_damaged_ = 0;
  // Files that had no dirty page and got one, in that order; a file leaves when it is found
  // clean at the front.
  std::deque<std::uint64_t> dirty_files_;
  std::size_t page_table_bytes_ = 0;  // the FilePages' buckets, summed
  std::int64_t used_ = 0;
  SlotIndex hand_ = 0;
  std::uint32_t dirty_count_ = 0;
};

}  // namespace flashdir::cache
