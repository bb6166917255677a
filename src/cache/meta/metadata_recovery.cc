// The metadata store's open (metadata_store.h; doc/cache.md "Metadata"): reading every metadata
// page, the usability rule and the repairs of what it drops.
#include <algorithm>
#include <bit>
#include <chrono>
#include <fmt/format.h>

#include "cache/meta/metadata_store.h"
#include "cache/meta/usability_rule.h"

namespace flashdir::cache {
namespace {

namespace flag = format::metadata_flag;

// Metadata pages read per FTL request at open.
constexpr std::uint32_t kOpenReadPages = 64;

// A multiply-xorshift mix of a file page.
std::uint64_t file_page_hash(std::uint64_t file_id, std::uint64_t page_no) {
  std::uint64_t h = (page_no ^ (file_id * 0xC2B2AE3D27D4EB4FULL)) * 0x9E3779B97F4A7C15ULL;
  return h ^ (h >> 29);
}

// The search for pages named twice partitions the entries by their hash's top bits first (one
// sequential pass), then searches each part with a table small enough to stay in the CPU's
// cache: one table for the whole cache (64 MiB for a full 16 GiB one) took a fifth of the
// restart after a cut, in cache misses and page faults, where the partitions cost two
// sequential passes.
constexpr unsigned kPartitionBits = 8;
constexpr std::size_t kPartitionMinEntries = 1 << 16;  // below this, one part

}  // namespace

Result<std::pair<std::unique_ptr<MetadataStore>, RecoveredSlots>> MetadataStore::open(Ftl& ftl, const SlotLayout& layout,
                                                                                      MetadataScheme scheme,
                                                                                      DuplicateSearch search) {
  const auto started = std::chrono::steady_clock::now();
  if (!layout.fits(ftl.logical_pages())) {
    return Status::invalid_argument("slot layout does not fit the FTL");
  }
  std::unique_ptr<MetadataStore> store(new MetadataStore(ftl, layout, scheme));
  const std::uint64_t M = layout.metadata_pages;
  const std::size_t page_bytes = layout.page_size_bytes;
  std::vector<std::optional<format::MetadataPage>> pages(M);
  std::vector<bool> damaged(M, false);
  std::vector<std::uint8_t> buffer(std::size_t{kOpenReadPages} * page_bytes);
  auto read_pages = [&](std::uint64_t first, std::uint32_t count) -> Status {
    const ByteSpan bytes = ByteSpan(buffer).first(count * page_bytes);
    Status s = ftl.read(Lpn(first), count, bytes);
    if (s.code() == StatusCode::corruption && count > 1) {
      // One bad page fails the whole run: find it page by page.
      for (std::uint32_t i = 0; i < count; ++i) {
        Status one = ftl.read(Lpn(first + i), 1, bytes.subspan(i * page_bytes, page_bytes));
        if (one.code() == StatusCode::corruption) {
          damaged[first + i] = true;
          std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(i * page_bytes), page_bytes, 0);
        } else if (!one.is_ok()) {
          return one;
        }
      }
      return Status::ok();
    }
    if (s.code() == StatusCode::corruption) {
      damaged[first] = true;
      std::fill(bytes.begin(), bytes.end(), 0);
      return Status::ok();
    }
    return s;
  };
  for (std::uint64_t first = 0; first < M; first += kOpenReadPages) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(kOpenReadPages, M - first));
    FLASHDIR_TRY(read_pages(first, count));
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint64_t p = first + i;
      if (damaged[p]) continue;
      auto decoded = decode_page(layout, p, ConstByteSpan(buffer).subspan(i * page_bytes, page_bytes));
      if (decoded.status().code() == StatusCode::not_found) continue;
      if (!decoded.is_ok()) {
        damaged[p] = true;
        continue;
      }
      if (decoded->header.scheme != meta::scheme_code(scheme)) {
        return Status::invalid_argument(fmt::format(
            "metadata page {} was written by scheme code {}, the cache is opened with code {} (doc/format.md)", p,
            static_cast<int>(decoded->header.scheme), static_cast<int>(meta::scheme_code(scheme))));
      }
      pages[p] = std::move(decoded).value();
    }
  }
  RecoveredSlots recovered;
  FLASHDIR_TRY(store->recover(pages, damaged, search, recovered));
  recovered.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return std::make_pair(std::move(store), std::move(recovered));
}

Result<format::MetadataPage> MetadataStore::decode_page(const SlotLayout& layout, std::uint64_t page,
                                                        ConstByteSpan bytes) {
  auto decoded = format::decode_metadata_page(bytes);
  if (!decoded.is_ok()) return decoded.status();
  // A page that decodes but sits in the wrong place or describes another layout.
  const format::MetadataPageHeader& header = decoded->header;
  if (header.page_number != page) {
    return Status::corruption(fmt::format("metadata page holds the header of page {}", header.page_number));
  }
  const std::uint32_t expected = layout.entries_in(static_cast<std::uint32_t>(page));
  if (decoded->entries.size() != expected) {
    return Status::corruption(
        fmt::format("metadata page holds {} entries, the cache's layout gives it {}", decoded->entries.size(), expected));
  }
  for (std::uint32_t n : header.window) {
    if (n >= layout.metadata_pages) {
      return Status::corruption(
          fmt::format("metadata page window names page {}, beyond the cache's {} metadata pages", n, layout.metadata_pages));
    }
  }
  return decoded;
}

Status MetadataStore::recover(std::span<const std::optional<format::MetadataPage>> pages,
                              const std::vector<bool>& damaged, DuplicateSearch search, RecoveredSlots& out) {
  std::vector<std::optional<format::MetadataPageHeader>> headers(pages.size());
  for (std::size_t p = 0; p < pages.size(); ++p) {
    if (pages[p]) headers[p] = pages[p]->header;
  }
  meta::ChipSummary chip = meta::summarize(headers);
  recovered_sequences_.assign(pages.size(), 0);
  for (std::size_t p = 0; p < pages.size(); ++p) {
    if (pages[p]) recovered_sequences_[p] = pages[p]->header.sequence;
  }
  std::vector<std::uint32_t> repairs;
  std::vector<SlotIndex> trims;
  for (std::uint32_t p = 0; p < pages.size(); ++p) {
    if (!damaged[p]) continue;
    // What a damaged page held is unknown: its slots go. It may also have been the newest
    // page, so neither the clean mark nor the window found elsewhere can be trusted.
    ++out.damaged_pages;
    chip.clean_shutdown = false;
    chip.window_lost = true;
    note_update(p);
    repairs.push_back(p);
    for (std::uint32_t i = 0; i < layout_.entries_in(p); ++i) trims.push_back(p * layout_.entries_per_page + i);
  }
  std::size_t written_entries = 0;
  for (const auto& page : pages) written_entries += page ? page->entries.size() : 0;
  out.usable.reserve(written_entries);
  sequence_ = chip.newest_sequence;
  clean_mark_on_chip_ = chip.clean_shutdown;
  out.clean_shutdown = chip.clean_shutdown;
  for (std::uint32_t p = 0; p < pages.size(); ++p) {
    const SlotIndex first = p * layout_.entries_per_page;
    if (!pages[p]) continue;  // never written (no entries) or damaged (above)
    const auto& entries = pages[p]->entries;
    for (std::uint32_t i = 0; i < entries.size(); ++i) {
      const SlotIndex slot = first + i;
      at(slot).chip_flags = entries[i].flags;
      switch (meta::judge(chip, scheme_, p, entries[i])) {
        case meta::Verdict::empty: break;
        case meta::Verdict::usable: {
          set_entry(slot, entries[i].file_id, entries[i].page_no,
                    static_cast<std::uint8_t>(entries[i].flags & ~flag::kWriting));
          const SlotEntry entry{entries[i].file_id, entries[i].page_no, entries[i].dirty()};
          out.usable.push_back({slot, entry});
          out.dirty += entry.dirty ? 1 : 0;
          break;
        }
        case meta::Verdict::dropped:
          ++out.dropped;
          note_update(p);
          repairs.push_back(p);
          trims.push_back(slot);
          break;
      }
    }
  }
  // A clean close wrote every buffered drop (close_clean): no file page is named twice, and the
  // search is left out.
  duplicates_possible_ = !chip.clean_shutdown;
  if (duplicates_possible_ && search == DuplicateSearch::in_open) drop_older_duplicates(out, repairs, trims);
  in_recovery_ = true;
  recovery_window_ = chip.window;
  if (chip.window_lost) {
    // Repairs carry a window of every page (up to its capacity) while they run.
    recovery_window_.clear();
    for (std::uint32_t p = 0; p < pages.size() && recovery_window_.size() < format::kMetadataWindowCapacity; ++p) {
      recovery_window_.push_back(p);
    }
  }
  Status repaired = write_pages(repairs);
  in_recovery_ = false;
  FLASHDIR_TRY(repaired);
  return trim_runs(std::move(trims));
}

std::vector<std::uint32_t> MetadataStore::find_duplicates(std::span<const RecoveredSlot> usable) const {
  std::vector<std::uint32_t> losers;
  if (!duplicates_possible_) return losers;
  // A file page evicted from one slot (its entry still VALID on the chip, the drop buffered)
  // and cached again in another: the newer entry is the one in the page written later (the
  // old slot's page, written after the drop, would have cleared it). The store's own writes
  // never leave such a pair (before_data_write writes the old drop first); this is the check
  // that a chip holding one is not served twice.
  auto sequence_of = [&](SlotIndex slot) { return recovered_sequences_[layout_.page_of(slot)]; };
  std::vector<bool> loser(usable.size(), false);
  // Each entry as (top half of its file page's hash) << 32 | index into `usable`, grouped by
  // the hash's top bits, each group in index order (a counting sort): a file page is named
  // twice only within one group, and a group's entries come in the order `usable` lists them,
  // so the older of two names is judged as a search over all entries in that order would.
  const unsigned bits = usable.size() < kPartitionMinEntries ? 0 : kPartitionBits;
  const std::size_t parts = std::size_t{1} << bits;
  std::vector<std::uint64_t> keyed(usable.size());
  std::vector<std::uint32_t> starts(parts + 1, 0);
  auto tag_of = [](const SlotEntry& e) { return file_page_hash(e.file_id, e.page_no) & ~std::uint64_t{UINT32_MAX}; };
  auto part_of = [&](std::uint64_t tag) { return bits == 0 ? 0 : static_cast<std::size_t>(tag >> (64 - bits)); };
  for (const RecoveredSlot& r : usable) ++starts[part_of(tag_of(r.entry)) + 1];
  for (std::size_t p = 0; p < parts; ++p) starts[p + 1] += starts[p];
  {
    std::vector<std::uint32_t> next(starts.begin(), starts.end() - 1);
    for (std::uint32_t i = 0; i < usable.size(); ++i) {
      const std::uint64_t tag = tag_of(usable[i].entry);
      keyed[next[part_of(tag)]++] = tag | i;
    }
  }
  // Per group, an open-addressing table, at most half full, of (tag | index + 1) (0: empty): a
  // probe reads another entry only when its tag matches.
  std::vector<std::uint64_t> table;
  for (std::size_t p = 0; p < parts; ++p) {
    const std::uint32_t count = starts[p + 1] - starts[p];
    if (count < 2) continue;
    const std::size_t buckets = std::bit_ceil(std::max<std::size_t>(2 * std::size_t{count}, 16));
    table.assign(buckets, 0);
    for (std::uint32_t k = starts[p]; k < starts[p + 1]; ++k) {
      const std::uint64_t tag = keyed[k] & ~std::uint64_t{UINT32_MAX};
      const auto i = static_cast<std::uint32_t>(keyed[k]);
      const SlotEntry& e = usable[i].entry;
      // The hash's low bits of the tag (below the group's bits) place it.
      std::size_t b = static_cast<std::size_t>(tag >> 32) & (buckets - 1);
      for (; table[b] != 0; b = (b + 1) & (buckets - 1)) {
        if ((table[b] & ~std::uint64_t{UINT32_MAX}) != tag) continue;
        const std::uint32_t other = static_cast<std::uint32_t>(table[b]) - 1;
        if (usable[other].entry.file_id != e.file_id || usable[other].entry.page_no != e.page_no) continue;
        const bool newer = sequence_of(usable[i].slot) > sequence_of(usable[other].slot);
        loser[newer ? other : i] = true;
        if (newer) table[b] = tag | (i + 1);
        break;
      }
      if (table[b] == 0) table[b] = tag | (i + 1);
    }
  }
  for (std::uint32_t i = 0; i < usable.size(); ++i)
    if (loser[i]) losers.push_back(i);
  return losers;
}

void MetadataStore::drop_older_duplicates(RecoveredSlots& out, std::vector<std::uint32_t>& repairs,
                                          std::vector<SlotIndex>& trims) {
  std::vector<RecoveredSlot>& usable = out.usable;
  const std::vector<std::uint32_t> losers = find_duplicates(usable);
  std::vector<bool> loser(usable.size(), false);
  for (std::uint32_t i : losers) loser[i] = true;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < usable.size(); ++i) {
    const RecoveredSlot r = usable[i];
    if (!loser[i]) {
      usable[kept++] = r;
      continue;
    }
    clear_entry(r.slot);
    out.dirty -= r.entry.dirty ? 1 : 0;
    ++out.dropped;
    ++out.duplicates;
    note_update(layout_.page_of(r.slot));
    repairs.push_back(layout_.page_of(r.slot));
    trims.push_back(r.slot);
  }
  usable.resize(kept);
}

}  // namespace flashdir::cache
