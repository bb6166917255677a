// Slot metadata on the chip: where each cached page lives, kept so that a restart — clean or
// after a power cut — finds the cache warm. One of three schemes (doc/cache.md "Metadata"):
//
//   lufuw                LUFUW (papers/lufuw.txt): an entry is set WRITING and its metadata page
//                        forced to the chip before the data write; WRITING is cleared in RAM
//                        once the FTL's durable watermark covers the data, and reaches the chip
//                        with the next write of that page; a window of up to 63 pages with
//                        unfinished writes rides in every page. Clean and dirty data survive.
//   write_update         Flashcache: metadata is written after the data is durable, and only on
//                        clean<->dirty changes. After a crash only dirty entries are trusted.
//   update_write_update  forced metadata before and after every data write.
//
// Layout (doc/format.md): LPNs [0, M) hold the metadata pages, slot s is data LPN M + s and its
// entry is entry s % E of metadata page s / E.
//
// The store owns the slots' on-chip lifecycle, trims included: a dropped slot's data LPN is
// trimmed by the store once the page recording the drop is on the chip (a trim before that
// could leave a VALID entry over a trimmed page, read back as zeros). The caller never trims
// slot LPNs itself.
//
// Calling protocol for a data write (a write or a read-miss fill) of slots S:
//   before_data_write(S) -> ftl.write(data) -> after_data_write(S, seq); on_durable() whenever
//   the FTL's durable watermark may have moved (after any FTL call). A batch S touches at most
//   63 metadata pages; between its before_data_write and after_data_write no other batch may
//   register (the window could not make room past its unwritten data).
//
// Thread safety: none. The engine calls it only under its FTL lock. After an error from the
// FTL (a power cut) every later call fails: reopen.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cache/meta/file_refs.h"
#include "cache/meta/pending_drops.h"
#include "cache/meta/unfinished_window.h"
#include "cache/restart_image.h"
#include "cache/zeroed_array.h"
#include "flashdir/cache/options.h"
#include "flashdir/endian.h"
#include "flashdir/format.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/status.h"

namespace flashdir::cache {

using SlotIndex = std::uint32_t;

struct SlotEntry {
  std::uint64_t file_id = 0;
  std::uint64_t page_no = 0;  // page index in the file; at most format::kMetadataMaxPageNumber
  bool dirty = false;
  bool operator==(const SlotEntry&) const = default;
};

struct SlotLayout {
  std::uint64_t metadata_pages = 0;
  std::uint64_t first_data_lpn = 0;  // slot 0's LPN: metadata_pages rounded up to the alignment
  std::uint32_t slot_count = 0;
  std::uint32_t entries_per_page = 0;
  std::uint32_t page_size_bytes = 0;

  // As many slots as fit with their metadata pages in `logical_pages`, slot 0 at the first
  // multiple of `alignment_pages` after the metadata pages.
  static Result<SlotLayout> compute(std::uint64_t logical_pages, std::uint32_t page_size_bytes,
                                    std::uint32_t alignment_pages = 1);
  // The layout of a cache on `ftl` whose superblock records `alignment`: with logical_block,
  // slot 0 begins one of CFTL's logical blocks, so a file cached into consecutive slots fills
  // logical blocks whole and can be block-mapped (doc/cache.md "Slots and replacement").
  static Result<SlotLayout> of(const Ftl& ftl, format::SlotAlignment alignment);
  Lpn data_lpn(SlotIndex slot) const { return Lpn(first_data_lpn + slot); }
  // Whether the metadata pages and the slots, in this order, lie within `logical_pages`.
  bool fits(std::uint64_t logical_pages) const {
    return entries_per_page != 0 && first_data_lpn >= metadata_pages && first_data_lpn + slot_count <= logical_pages;
  }
  std::uint32_t page_of(SlotIndex slot) const { return slot / entries_per_page; }
  // Entries metadata page `page` holds (the last one may hold fewer).
  std::uint32_t entries_in(std::uint32_t page) const;
};

struct RecoveredSlot {
  SlotIndex slot = 0;
  SlotEntry entry;
};

struct RecoveredSlots {
  std::vector<RecoveredSlot> usable;  // clean and dirty slots that pass the usability rule, no file page twice
  std::uint64_t dropped = 0;          // entries that failed it: cleared on the chip and trimmed
  std::uint64_t dirty = 0;            // usable dirty slots (to write back)
  std::uint64_t damaged_pages = 0;    // metadata pages that failed to read or decode
  std::uint64_t duplicates = 0;       // older entries of a file page found twice (in dropped)
  bool clean_shutdown = false;
  double seconds = 0;                 // wall time of open(), reading and repairs included
  double usable_fraction() const;     // usable / (usable + dropped); 1 when both are 0
};

struct MetadataCounters {
  std::uint64_t metadata_writes = 0;    // metadata pages written to the chip
  std::uint64_t entries_written = 0;    // entry updates those writes carried (batching)
  std::uint64_t data_writes = 0;        // slot data writes the store was told about
  std::uint64_t window_forced = 0;      // writes a full window forced to completion
  std::uint64_t committed_writes = 0;   // unfinished writes a commit finished
  std::uint64_t trims = 0;              // slot LPNs trimmed after their drop reached the chip
  double metadata_writes_per_data_write() const;
  double entries_per_metadata_write() const;
};

struct SlotWrite {
  SlotIndex slot = 0;
  SlotEntry entry;
};

class MetadataStore {
 public:
  // Lays out an empty cache (a clean one: nothing to recover).
  static Result<std::unique_ptr<MetadataStore>> format(Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme);
  // Reads every metadata page, applies the usability rule, clears and trims what it drops.
  // A damaged metadata page drops its slots (counted); a page of another scheme is an error.
  // Where the search for file pages named twice (after an unclean stop) runs: in open(), which
  // then returns none; or by the caller (the engine), which runs find_duplicates beside its
  // slot table's load and drops what it finds before serving anything.
  enum class DuplicateSearch { in_open, by_caller };
  static Result<std::pair<std::unique_ptr<MetadataStore>, RecoveredSlots>> open(
      Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme, DuplicateSearch search = DuplicateSearch::in_open);
  // After open(..., by_caller): the indices in `usable` (open's RecoveredSlots::usable, in its
  // order) of the older entries of file pages named twice, ascending; none after a clean stop.
  // Reads only what open() left and changes nothing: it may run on another thread while the
  // caller reads the store (not while it changes it). The caller drops those slots
  // (drop(..., forced)) before it serves anything.
  std::vector<std::uint32_t> find_duplicates(std::span<const RecoveredSlot> usable) const;

  // Decodes the bytes read at metadata page `page` (format::decode_metadata_page) and checks
  // that they belong there: the header's page number, the entry count the layout gives the
  // page, a window naming only metadata pages. not_found for a page never written, corruption
  // (naming the test, not the page) for anything else refused. open() drops the slots of a refused page;
  // fsck names it.
  static Result<format::MetadataPage> decode_page(const SlotLayout& layout, std::uint64_t page, ConstByteSpan bytes);

  // Before `writes`' data is written: each slot gets its new entry (a slot still awaiting a
  // drop's trim keeps its data LPN, which the write replaces).
  Status before_data_write(std::span<const SlotWrite> writes);
  Status before_data_write(SlotIndex slot, const SlotEntry& entry) { return before_data_write({{SlotWrite{slot, entry}}}); }
  // After the data write of `slots` returned with FTL sequence `ftl_seq`.
  Status after_data_write(std::span<const SlotIndex> slots, std::uint64_t ftl_seq);
  Status after_data_write(SlotIndex slot, std::uint64_t ftl_seq) { return after_data_write({{slot}}, ftl_seq); }
  // The FTL's durable watermark (ftl.durable_seq()) may have moved: finished writes lose
  // WRITING in RAM only.
  void on_durable(std::uint64_t durable_seq);
  // fsync: the slots' data and entries, as the store holds them in RAM, are on the chip when
  // this returns (data programmed out of the device RAM, confirmations written).
  Status sync_slots(std::span<const SlotIndex> slots);
  // A commit (doc/cache.md "Commit"): every unfinished write finishes, its data programmed if
  // it still sits in the device RAM, and if the window on the chip (in the newest metadata
  // page) is not the one in RAM, now empty, one metadata page is written to publish it (lufuw;
  // the other schemes finish their writes as they go). A cut then keeps every write so far.
  // Neither syncs the image nor writes translation pages: a programmed page survives a cut.
  Status commit();
  // Writes whose data the durable watermark does not cover yet and that no commit finished:
  // what a cut now would drop (lufuw). The engine bounds it (commit_pending_bytes).
  std::size_t unprotected_writes() const { return unfinished_.size(); }
  // Dirty slots were written back and their files synced: clean on the chip when this returns.
  Status mark_clean(std::span<const SlotIndex> slots);
  // Slots leave the cache. buffered (eviction): the entry reaches the chip with the page's next
  // write, a crash before may bring back the (still correct) clean page. forced (stale data,
  // truncate, corruption): on the chip when this returns.
  Status drop(std::span<const SlotIndex> slots, Durability durability);
  // A file's data changed behind the cache: `slots` (its cached ones) are dropped and so is
  // every earlier buffered drop of the file still awaiting its page write, durably, before the
  // caller records the new attributes.
  Status invalidate_file(std::uint64_t file_id, std::span<const SlotIndex> slots);
  // Before a write to the backing file that does not go through before_data_write (write-around,
  // a write past the admission cutoff): buffered drops of those file pages reach the chip, so
  // that a cut cannot bring back their old bytes as valid.
  Status forget(std::uint64_t file_id, std::uint64_t first_page, std::uint64_t count);
  // After the caller's final FTL flush: every change on the chip, then the clean mark.
  Status close_clean();

  // The store's part of a restart image (cache/restart_image.h), after close_clean(): its RAM
  // entries in chunks, each a part of the image, and in the index its file numbers and where
  // the chunks lie. They say what the metadata pages say. metadata_image.cc.
  Result<std::vector<std::uint8_t>> save_image(RestartImageWriter& parts) const;
  // The store as save_image left it, over a chip unchanged since (the caller checked that), or
  // why the index cannot be such a store; reads no metadata page. Each chunk of entries is
  // read from the image, and checked, the first time one of its slots is touched; a chunk that
  // fails is read from its metadata pages instead, and what those cannot give is lost
  // (image_entries_lost).
  static Result<std::unique_ptr<MetadataStore>> restore_image(Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme,
                                                             std::shared_ptr<const RestartImage> image,
                                                             LittleEndianReader& index);
  // Since restore_image: chunks of the image that failed and were read from the chip instead;
  // entries the image held valid that the chip could not give back (slots now free); and the
  // change in valid entries those chunks brought, lost ones negative (the slot table's count
  // of used slots, taken from the image, moves by it).
  std::uint64_t image_chunks_damaged() const { return image_chunks_damaged_; }
  std::uint64_t image_entries_lost() const { return image_entries_lost_; }
  std::int64_t image_entries_change() const { return image_entries_change_; }
  // Whether `slot`'s entry came from the chip in place of a damaged chunk of the image: a page
  // table the image holds is not to be trusted over it (SlotTable rebuilds one that names it).
  bool read_from_chip(SlotIndex slot) const {
    return !chunks_from_chip_.empty() && chunks_from_chip_[slot / chunk_slots_from_chip_];
  }

  MetadataCounters counters() const { return counters_; }
  const SlotLayout& layout() const { return layout_; }
  MetadataScheme scheme() const { return scheme_; }
  // The entry the store holds for `slot` in RAM (tests, fsck).
  std::optional<SlotEntry> entry(SlotIndex slot) const;
  bool writing(SlotIndex slot) const;
  std::vector<std::uint32_t> window_pages() const { return window_.pages(); }
  // The key of a slot whose entry is valid in RAM, read by the engine's index (which keeps no
  // copy of it); unspecified for other slots.
  std::uint64_t file_id_of(SlotIndex slot) const { return file_of(at(slot)); }
  std::uint64_t page_no_of(SlotIndex slot) const { return at(slot).page_no(); }
  // RAM the store holds, measured from its containers (the engine's bytes-per-page figure).
  std::size_t ram_bytes() const;
  // Buffered drops waiting for their page's next write before the store writes those pages
  // itself (so that evicted slots do not stay untrimmed for long).
  static constexpr std::size_t kMaxPendingDrops = 1024;

 private:
  MetadataStore(Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme);

  // RAM entry, 12 bytes a slot: the file's number (FileRefs), the page number (48 bits), the
  // entry's flags in RAM and its flags as last written to the chip.
  struct Entry {
    std::uint32_t file_ref = 0;  // 0: no file
    std::uint32_t page_low = 0;
    std::uint16_t page_high = 0;
    std::uint8_t flags = 0;
    std::uint8_t chip_flags = 0;
    std::uint64_t page_no() const { return std::uint64_t{page_high} << 32 | page_low; }
  };
  static_assert(sizeof(Entry) == 12);

  // Entries a restart image still holds (restore_image): chunk c is slots [c * chunk_slots,
  // (c + 1) * chunk_slots), whole metadata pages, read at its first touch. Dropped once every
  // chunk is in.
  struct ImageChunks {
    struct Chunk {
      ImagePart part;
      std::uint32_t valid = 0;  // valid entries the image holds in it
    };
    std::shared_ptr<const RestartImage> image;
    std::uint32_t chunk_slots = 0;
    std::vector<Chunk> chunks;
    std::vector<bool> loaded;
    std::size_t left = 0;  // chunks not loaded yet
  };
  // Every read and write of an entry goes through these, so that a chunk still in the image
  // is read first.
  const Entry& at(SlotIndex slot) const {
    if (image_chunks_ != nullptr) [[unlikely]] load_chunk_of(slot);
    return entries_[slot];
  }
  Entry& at(SlotIndex slot) {
    if (image_chunks_ != nullptr) [[unlikely]] load_chunk_of(slot);
    return entries_[slot];
  }
  // Logically const: it fills in what the store already holds, from the image.
  void load_chunk_of(SlotIndex slot) const;
  void load_chunk(std::uint32_t chunk);
  bool decode_chunk(ConstByteSpan bytes, SlotIndex first, std::uint32_t count);
  // A damaged chunk's entries from its metadata pages, as a restart after a clean stop reads
  // them; returns how many valid entries it found.
  std::uint32_t read_chunk_from_chip(SlotIndex first, std::uint32_t count);

  // A new entry for `slot` in RAM (what the chip holds for it stays as it was); clear_entry
  // empties it. The only writers of an entry's file and page, so that FileRefs counts right.
  void set_entry(SlotIndex slot, std::uint64_t file_id, std::uint64_t page_no, std::uint8_t flags);
  void clear_entry(SlotIndex slot);
  std::uint64_t file_of(const Entry& e) const { return file_refs_.file_id(e.file_ref); }

  Status write_page(std::uint32_t page, bool clean_mark = false);
  Status write_pages(std::vector<std::uint32_t> pages);
  // Programs the data of `slots` if it still sits in the device RAM (one call per LPN run).
  Status make_data_durable(std::vector<SlotIndex> slots);
  // Room in the window for every page of a batch, made before any write of the batch
  // registers: a page already in the window may be its oldest, and forcing it once it holds a
  // write of the batch (data not written yet) would be impossible.
  Status make_window_room(std::vector<std::uint32_t> pages);
  // Makes room in the window: the oldest page's writes are completed (their data programmed
  // if it still sits in the device RAM) and the page written with the confirmations.
  Status force_oldest();
  // Finishes every unfinished write, programming the data the device RAM still holds (a commit,
  // a clean close). `why` names the caller in the error a write in flight gets.
  Status finish_unfinished(const char* why);
  void finish(SlotIndex slot);
  void note_update(std::uint32_t page);
  Status trim_runs(std::vector<SlotIndex> slots);
  Status check_slot(SlotIndex slot) const;
  Status recover(std::span<const std::optional<format::MetadataPage>> pages, const std::vector<bool>& damaged,
                 DuplicateSearch search, RecoveredSlots& out);
  void drop_older_duplicates(RecoveredSlots& out, std::vector<std::uint32_t>& repairs, std::vector<SlotIndex>& trims);
  Status check_alive() const { return failed_; }
  Status fail(Status status);

  Ftl& ftl_;
  SlotLayout layout_;
  MetadataScheme scheme_;
  std::uint32_t page_size_bytes_ = 0;
  ZeroedArray<Entry> entries_;
  std::unique_ptr<ImageChunks> image_chunks_;
  std::uint64_t image_chunks_damaged_ = 0;
  std::uint64_t image_entries_lost_ = 0;
  std::int64_t image_entries_change_ = 0;
  std::vector<bool> chunks_from_chip_;  // by chunk of the image; empty until one is
  std::uint32_t chunk_slots_from_chip_ = 1;
  meta::FileRefs file_refs_;
  std::vector<std::uint32_t> page_updates_;  // entry updates a page's next write carries
  meta::UnfinishedWindow window_;
  // Unfinished writes: slot -> FTL sequence of its data (0 before after_data_write).
  absl::flat_hash_map<SlotIndex, std::uint64_t> unfinished_;
  // The unfinished writes as (FTL sequence, slot) in the order their data was written, which is
  // the order the durable watermark reaches them: on_durable finishes a prefix instead of
  // walking every unfinished slot (65% of a 4 KiB write-back write's time when it did).
  std::deque<std::pair<std::uint64_t, SlotIndex>> written_order_;
  meta::PendingDrops pending_drops_;
  std::uint64_t sequence_ = 0;
  // The window the newest metadata page on the chip carries (nullopt: not known since open).
  std::optional<std::vector<std::uint32_t>> chip_window_;
  bool clean_mark_on_chip_ = false;
  // During open(), repairs carry the window found on the chip: until every entry it condemns is
  // cleared, a newer page without it would make them look finished.
  bool in_recovery_ = false;
  // From open(): each metadata page's sequence as read (0: none or damaged), and whether file
  // pages may be named twice (an unclean stop); find_duplicates reads them.
  std::vector<std::uint64_t> recovered_sequences_;
  bool duplicates_possible_ = false;
  std::vector<std::uint32_t> recovery_window_;
  std::vector<std::uint8_t> page_buffer_;
  std::vector<format::MetadataEntry> encode_scratch_;
  MetadataCounters counters_;
  Status failed_;
};

}  // namespace flashdir::cache
