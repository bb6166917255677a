// The cached pages of one file: an open-addressing table (linear probing) of slot numbers,
// keyed by page number (doc/cache.md "Slots and replacement").
//
// The key is not stored here. A bucket holds only the 4-byte slot number; the page number it
// is compared against is read through `page_of(slot)` from the slot's metadata entry, which
// the MetadataStore keeps in RAM anyway to write metadata pages. So a cached page costs one
// bucket here (4 bytes over the load factor) and nothing else.
//
// The table grows by half when it would pass 7/8 full and shrinks when it falls under 1/4, so
// it stays between about 58% and 88% full (4.6 to 6.9 bytes a page) whatever the file's size.
// Deletion shifts the following entries back (no tombstones), so a lookup never slows down
// with churn. Not thread-safe.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/numeric/int128.h"
#include "flashdir/endian.h"
#include "flashdir/status.h"
#include "cache/meta/metadata_store.h"

namespace flashdir::cache {

class FilePages {
 public:
  std::uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::size_t ram_bytes() const { return buckets_.capacity() * sizeof(SlotIndex); }

  // The slot holding `page`, if cached.
  template <typename PageOf>
  std::optional<SlotIndex> find(std::uint64_t page, const PageOf& page_of) const {
    if (count_ == 0) return std::nullopt;
    for (std::size_t b = home(page, buckets_.size());; b = next(b)) {
      const SlotIndex slot = buckets_[b];
      if (slot == kEmpty) return std::nullopt;
      if (page_of(slot) == page) return slot;
    }
  }

  // Adds `slot`, whose page (page_of(slot)) is not in the table.
  template <typename PageOf>
  void insert(SlotIndex slot, const PageOf& page_of) {
    assert(slot != kEmpty && !find(page_of(slot), page_of));
    if ((std::uint64_t{count_} + 1) * 8 > std::uint64_t{buckets_.size()} * 7)
      rehash(std::max<std::size_t>(kMinBuckets, buckets_.size() + buckets_.size() / 2), page_of);
    place(buckets_, slot, page_of(slot));
    ++count_;
  }

  // Room for `count` pages in all, at the fill a shrink leaves (5/8), so that inserting them
  // rehashes never (a restart inserts each file's pages at once).
  template <typename PageOf>
  void reserve(std::uint32_t count, const PageOf& page_of) {
    const std::size_t wanted = std::size_t{count} * 8 / 5 + 1;
    if (wanted > buckets_.size()) rehash(std::max<std::size_t>(kMinBuckets, wanted), page_of);
  }

  // Adds `slot`, holding `page`, to a table reserve() made room for, without the lookup insert
  // asserts with: a restart loads millions of pages, and each lookup there read a random slot's
  // entry. A page added twice (a restart after a cut, before the engine removes the older name
  // MetadataStore::find_duplicates found) is held twice until one is erased by its slot.
  void add_unique(SlotIndex slot, std::uint64_t page) {
    assert(slot != kEmpty && (std::uint64_t{count_} + 1) * 8 <= std::uint64_t{buckets_.size()} * 7);
    place(buckets_, slot, page);
    ++count_;
  }

  // Removes `slot`, which is in the table; page_of must still answer for every slot in it.
  // False if it was not where its page number puts it (a table that disagrees with the
  // entries: a bug): then it is searched for and removed wherever it is, or found absent.
  template <typename PageOf>
  bool erase(SlotIndex slot, const PageOf& page_of) {
    if (buckets_.empty()) return false;
    std::size_t hole = home(page_of(slot), buckets_.size());
    while (buckets_[hole] != slot) {
      if (buckets_[hole] == kEmpty) {
        if (std::find(buckets_.begin(), buckets_.end(), slot) != buckets_.end()) {
          retain([slot](SlotIndex other) { return other != slot; }, page_of);
        }
        return false;
      }
      hole = next(hole);
    }
    // Backward shift: each following entry that may not stay behind the hole moves into it.
    for (std::size_t b = next(hole); buckets_[b] != kEmpty; b = next(b)) {
      const std::size_t want = home(page_of(buckets_[b]), buckets_.size());
      // The entry at b may stay if its home lies cyclically in (hole, b].
      const bool stays = hole < b ? (want > hole && want <= b) : (want > hole || want <= b);
      if (stays) continue;
      buckets_[hole] = buckets_[b];
      hole = b;
    }
    buckets_[hole] = kEmpty;
    --count_;
    if (count_ == 0) {
      buckets_ = std::vector<SlotIndex>();  // frees the buckets
    } else if (std::uint64_t{count_} * 4 < buckets_.size() && buckets_.size() > kMinBuckets) {
      rehash(std::max<std::size_t>(kMinBuckets, std::size_t{count_} * 8 / 5 + 1), page_of);
    }
    return true;
  }

  // Keeps the slots for which keep(slot) holds and drops the others, in one pass and one
  // rehash; page_of need answer only for the kept ones. Erasing many slots one by one costs a
  // backward shift each, and erased in the table's own order (all of a file's, as for_each
  // lists them) each shift runs along the rest of its cluster: forgetting a 256 MiB file that
  // way took 1.5 s.
  template <typename Keep, typename PageOf>
  void retain(const Keep& keep, const PageOf& page_of) {
    std::uint32_t kept = 0;
    for (SlotIndex& slot : buckets_) {
      if (slot == kEmpty) continue;
      if (keep(slot)) {
        ++kept;
      } else {
        slot = kEmpty;  // the holes this leaves in clusters go with the rehash below
      }
    }
    count_ = kept;
    if (kept == 0) {
      buckets_ = std::vector<SlotIndex>();
      cursor_ = 0;
      return;
    }
    rehash(std::max<std::size_t>(kMinBuckets, std::size_t{kept} * 8 / 5 + 1), page_of);
  }

  // The table as it is, for a restart image (restart_image.h): count, cursor, buckets.
  std::size_t image_bytes() const { return 16 + buckets_.size() * sizeof(SlotIndex); }
  void save_image(LittleEndianWriter& out) const {
    out.u32(count_);
    out.u32(cursor_);
    out.u64(buckets_.size());
    for (SlotIndex slot : buckets_) out.u32(slot);
  }
  // The table save_image wrote, or why it cannot be one; `take(slot)` is called for every slot
  // in it and refuses one that does not belong here (false). Checks the counts, never where a
  // slot sits: the image's checksum vouches for that.
  template <typename Take>
  static Result<FilePages> restore_image(LittleEndianReader& in, const Take& take) {
    if (in.remaining() < 16) return Status::corruption("a file's page table is cut short");
    FilePages pages;
    pages.count_ = in.u32();
    pages.cursor_ = in.u32();
    const std::uint64_t buckets = in.u64();
    if (buckets > in.remaining() / sizeof(SlotIndex) || pages.count_ == 0 ||
        std::uint64_t{pages.count_} * 8 > buckets * 7) {
      return Status::corruption("a file's page table has impossible counts");
    }
    pages.buckets_.resize(buckets);
    std::uint32_t found = 0;
    for (SlotIndex& slot : pages.buckets_) {
      slot = in.u32();
      if (slot == kEmpty) continue;
      if (!take(slot)) return Status::corruption("a file's page table names a slot that is not its own");
      ++found;
    }
    if (found != pages.count_) return Status::corruption("a file's page table holds another count than it records");
    return pages;
  }

  // Calls fn(slot) for every slot, in table order.
  template <typename Fn>
  void for_each(const Fn& fn) const {
    for (SlotIndex slot : buckets_)
      if (slot != kEmpty) fn(slot);
  }

  // Up to `max` slots for which pred(slot) holds, searching on from where the last call
  // stopped (so that taking a file's dirty pages batch after batch walks its table once).
  template <typename Pred>
  std::vector<SlotIndex> take_from_cursor(std::size_t max, const Pred& pred) {
    std::vector<SlotIndex> found;
    if (buckets_.empty()) return found;
    if (cursor_ >= buckets_.size()) cursor_ = 0;
    for (std::size_t seen = 0; seen < buckets_.size() && found.size() < max; ++seen) {
      const SlotIndex slot = buckets_[cursor_];
      cursor_ = static_cast<std::uint32_t>(next(cursor_));
      if (slot != kEmpty && pred(slot)) found.push_back(slot);
    }
    return found;
  }

 private:
  static constexpr SlotIndex kEmpty = UINT32_MAX;
  static constexpr std::size_t kMinBuckets = 2;

  // A page number's home bucket: a 64-bit mix, then scaled to the table's size (any size, not
  // only powers of two, so that growth can be by half).
  static std::size_t home(std::uint64_t page, std::size_t buckets) {
    std::uint64_t h = page * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 32;
    return static_cast<std::size_t>(absl::Uint128High64(absl::uint128(h) * buckets));
  }
  std::size_t next(std::size_t b) const { return b + 1 == buckets_.size() ? 0 : b + 1; }

  static void place(std::vector<SlotIndex>& buckets, SlotIndex slot, std::uint64_t page) {
    std::size_t b = home(page, buckets.size());
    while (buckets[b] != kEmpty) b = b + 1 == buckets.size() ? 0 : b + 1;
    buckets[b] = slot;
  }

  template <typename PageOf>
  void rehash(std::size_t bucket_count, const PageOf& page_of) {
    std::vector<SlotIndex> grown(bucket_count, kEmpty);
    for (SlotIndex slot : buckets_)
      if (slot != kEmpty) place(grown, slot, page_of(slot));
    buckets_ = std::move(grown);
    cursor_ = 0;
  }

  std::vector<SlotIndex> buckets_;
  std::uint32_t count_ = 0;
  std::uint32_t cursor_ = 0;
};

}  // namespace flashdir::cache
