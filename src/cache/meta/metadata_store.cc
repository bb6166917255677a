// The metadata store (metadata_store.h; doc/cache.md "Metadata").
#include "cache/meta/metadata_store.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>

#include "cache/meta/usability_rule.h"

namespace flashdir::cache {
namespace {

using format::MetadataEntry;
namespace flag = format::metadata_flag;

template <typename Fn>
Status for_each_run(std::vector<SlotIndex> slots, Fn fn) {
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  for (std::size_t i = 0; i < slots.size();) {
    std::size_t n = 1;
    while (i + n < slots.size() && slots[i + n] == slots[i] + n) ++n;
    FLASHDIR_TRY(fn(slots[i], static_cast<std::uint32_t>(n)));
    i += n;
  }
  return Status::ok();
}

std::vector<std::uint32_t> sorted_unique(std::vector<std::uint32_t> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Layout and figures

Result<SlotLayout> SlotLayout::compute(std::uint64_t logical_pages, std::uint32_t page_size_bytes,
                                       std::uint32_t alignment_pages) {
  const std::uint64_t per_page = format::metadata_entries_per_page(page_size_bytes);
  if (per_page == 0) {
    return Status::invalid_argument(fmt::format("a {}-byte page holds no metadata entries", page_size_bytes));
  }
  const std::uint64_t align = std::max<std::uint32_t>(alignment_pages, 1);
  const auto first_data_lpn = [&](std::uint64_t slots) {
    const std::uint64_t metadata = (slots + per_page - 1) / per_page;
    return (metadata + align - 1) / align * align;
  };
  // first_data_lpn(S) + S <= L with M = ceil(S / E): start from S = L * E / (E + 1) and step
  // down (the alignment costs fewer than `align` more steps).
  std::uint64_t slots = std::min<std::uint64_t>(logical_pages / (per_page + 1) * per_page +
                                                    (logical_pages % (per_page + 1)),
                                                UINT32_MAX);
  while (slots > 0 && first_data_lpn(slots) + slots > logical_pages) --slots;
  if (slots == 0) return Status::no_space(fmt::format("{} logical pages hold no cache slot", logical_pages));
  SlotLayout layout;
  layout.slot_count = static_cast<std::uint32_t>(slots);
  layout.entries_per_page = static_cast<std::uint32_t>(per_page);
  layout.metadata_pages = (slots + per_page - 1) / per_page;
  layout.first_data_lpn = first_data_lpn(slots);
  layout.page_size_bytes = page_size_bytes;
  return layout;
}

Result<SlotLayout> SlotLayout::of(const Ftl& ftl, format::SlotAlignment alignment) {
  const std::uint32_t alignment_pages =
      alignment == format::SlotAlignment::logical_block ? ftl.pages_per_block() : 1;
  return compute(ftl.logical_pages(), ftl.page_size_bytes(), alignment_pages);
}

std::uint32_t SlotLayout::entries_in(std::uint32_t page) const {
  const std::uint64_t first = std::uint64_t{page} * entries_per_page;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(entries_per_page, slot_count - first));
}

double RecoveredSlots::usable_fraction() const {
  const double total = static_cast<double>(usable.size() + dropped);
  return total == 0 ? 1.0 : static_cast<double>(usable.size()) / total;
}

double MetadataCounters::metadata_writes_per_data_write() const {
  return data_writes == 0 ? 0.0 : static_cast<double>(metadata_writes) / static_cast<double>(data_writes);
}

double MetadataCounters::entries_per_metadata_write() const {
  return metadata_writes == 0 ? 0.0 : static_cast<double>(entries_written) / static_cast<double>(metadata_writes);
}

// ---------------------------------------------------------------------------------------------
// Construction and format

MetadataStore::MetadataStore(Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme)
    : ftl_(ftl),
      layout_(layout),
      scheme_(scheme),
      entries_(layout.slot_count),
      page_updates_(layout.metadata_pages, 0),
      window_(format::kMetadataWindowCapacity),
      page_buffer_(layout.page_size_bytes) {}

Result<std::unique_ptr<MetadataStore>> MetadataStore::format(Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme) {
  if (!layout.fits(ftl.logical_pages())) {
    return Status::invalid_argument(fmt::format("slot layout of {} metadata pages and {} slots does not fit {} logical pages",
                                                layout.metadata_pages, layout.slot_count, ftl.logical_pages()));
  }
  std::unique_ptr<MetadataStore> store(new MetadataStore(ftl, layout, scheme));
  // Pages never written read as zeros and hold no entries; the first one carries the clean
  // mark so that the fresh cache opens clean.
  FLASHDIR_TRY(store->write_page(0, /*clean_mark=*/true));
  return store;
}

// ---------------------------------------------------------------------------------------------
// Writing metadata pages

Status MetadataStore::fail(Status status) {
  if (failed_.is_ok()) failed_ = status;
  return status;
}

Status MetadataStore::check_slot(SlotIndex slot) const {
  if (slot >= layout_.slot_count) {
    return Status::invalid_argument(fmt::format("slot {} is beyond the cache's {} slots", slot, layout_.slot_count));
  }
  return Status::ok();
}

void MetadataStore::note_update(std::uint32_t page) { ++page_updates_[page]; }

void MetadataStore::set_entry(SlotIndex slot, std::uint64_t file_id, std::uint64_t page_no, std::uint8_t flags) {
  Entry& e = at(slot);
  if (e.file_ref == 0 || file_of(e) != file_id) {
    const std::uint32_t ref = file_refs_.acquire(file_id);
    if (e.file_ref != 0) file_refs_.release(e.file_ref);
    e.file_ref = ref;
  }
  e.page_low = static_cast<std::uint32_t>(page_no);
  e.page_high = static_cast<std::uint16_t>(page_no >> 32);
  e.flags = flags;
}

void MetadataStore::clear_entry(SlotIndex slot) {
  Entry& e = at(slot);
  if (e.file_ref != 0) file_refs_.release(e.file_ref);
  e.file_ref = 0;
  e.page_low = 0;
  e.page_high = 0;
  e.flags = 0;
}

Status MetadataStore::write_page(std::uint32_t page, bool clean_mark) {
  FLASHDIR_TRY(check_alive());
  format::MetadataPageHeader header;
  header.page_number = page;
  header.sequence = sequence_ + 1;
  header.scheme = meta::scheme_code(scheme_);
  header.clean_shutdown = clean_mark;
  header.window = in_recovery_ ? recovery_window_ : window_.pages();
  const SlotIndex first = page * layout_.entries_per_page;
  const std::uint32_t count = layout_.entries_in(page);
  encode_scratch_.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const Entry& e = at(first + i);
    encode_scratch_[i] = (e.flags & flag::kValid) ? MetadataEntry{file_of(e), e.page_no(), e.flags} : MetadataEntry{};
  }
  format::encode_metadata_page(header, encode_scratch_, page_buffer_);
  auto written = ftl_.write(Lpn(page), 1, page_buffer_, WriteHint::hot, Durability::forced);
  if (!written.is_ok()) return fail(written.status());
  sequence_ = header.sequence;
  chip_window_ = std::move(header.window);
  clean_mark_on_chip_ = clean_mark;
  ++counters_.metadata_writes;
  counters_.entries_written += page_updates_[page];
  page_updates_[page] = 0;
  for (std::uint32_t i = 0; i < count; ++i) at(first + i).chip_flags = encode_scratch_[i].flags;
  // The drops this page now records on the chip: their data may go.
  std::vector<SlotIndex> trims;
  for (const meta::PendingDrop& d : pending_drops_.take(page)) {
    if (!(at(d.slot).flags & flag::kValid)) trims.push_back(d.slot);
  }
  return trim_runs(std::move(trims));
}

Status MetadataStore::write_pages(std::vector<std::uint32_t> pages) {
  for (std::uint32_t page : sorted_unique(std::move(pages))) FLASHDIR_TRY(write_page(page));
  return Status::ok();
}

Status MetadataStore::trim_runs(std::vector<SlotIndex> slots) {
  return for_each_run(std::move(slots), [&](SlotIndex first, std::uint32_t n) -> Status {
    if (Status s = ftl_.trim(layout_.data_lpn(first), n); !s.is_ok()) return fail(s);
    counters_.trims += n;
    return Status::ok();
  });
}

Status MetadataStore::make_data_durable(std::vector<SlotIndex> slots) {
  return for_each_run(std::move(slots), [&](SlotIndex first, std::uint32_t n) -> Status {
    if (Status s = ftl_.make_durable(layout_.data_lpn(first), n); !s.is_ok()) return fail(s);
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------------
// The write protocol

void MetadataStore::finish(SlotIndex slot) {
  const std::uint32_t page = layout_.page_of(slot);
  Entry& e = at(slot);
  if (e.flags & flag::kWriting) {
    e.flags = static_cast<std::uint8_t>(e.flags & ~flag::kWriting);
    note_update(page);  // the confirmation, carried by the page's next write
  }
  unfinished_.erase(slot);
  if (scheme_ == MetadataScheme::lufuw) window_.finish(page, slot);
}

Status MetadataStore::force_oldest() {
  const std::uint32_t page = *window_.oldest_page();
  const std::vector<SlotIndex> slots = window_.unfinished_slots(page);
  for (SlotIndex slot : slots) {
    if (unfinished_.at(slot) == 0) {
      return Status::invalid_argument(fmt::format(
          "the metadata window is full and its oldest page holds slot {}, whose data write has not happened yet "
          "(a batch registered while another was in flight)",
          slot));
    }
  }
  FLASHDIR_TRY(make_data_durable(slots));
  for (SlotIndex slot : slots) finish(slot);
  counters_.window_forced += slots.size();
  return write_page(page);
}

Status MetadataStore::make_window_room(std::vector<std::uint32_t> pages) {
  pages = sorted_unique(std::move(pages));
  if (pages.size() > window_.capacity()) {
    return Status::invalid_argument(fmt::format("a batch of data writes touches {} metadata pages, more than the {} of the window",
                                                pages.size(), window_.capacity()));
  }
  for (;;) {
    const auto absent = static_cast<std::size_t>(
        std::count_if(pages.begin(), pages.end(), [&](std::uint32_t page) { return !window_.contains(page); }));
    if (window_.size() + absent <= window_.capacity()) return Status::ok();
    // A forced page of the batch leaves the window and is counted absent on the next turn.
    FLASHDIR_TRY(force_oldest());
  }
}

Status MetadataStore::before_data_write(std::span<const SlotWrite> writes) {
  FLASHDIR_TRY(check_alive());
  std::vector<std::uint32_t> pages;
  for (const SlotWrite& w : writes) {
    FLASHDIR_TRY(check_slot(w.slot));
    if (w.entry.page_no > format::kMetadataMaxPageNumber) {
      return Status::invalid_argument(fmt::format("page number {} of file {} is beyond the metadata format's 2^48",
                                                  w.entry.page_no, w.entry.file_id));
    }
  }
  if (scheme_ == MetadataScheme::lufuw) {
    std::vector<std::uint32_t> batch_pages;
    for (const SlotWrite& w : writes) batch_pages.push_back(layout_.page_of(w.slot));
    FLASHDIR_TRY(make_window_room(std::move(batch_pages)));
  }
  std::vector<std::pair<const SlotWrite*, std::uint8_t>> new_entries;  // each write's entry, with its flags
  for (const SlotWrite& w : writes) {
    const std::uint32_t page = layout_.page_of(w.slot);
    // A buffered drop of this slot is overtaken: the new data replaces the LPN, no trim.
    pending_drops_.cancel(page, w.slot);
    // The file page's old copy in another slot, still named on the chip, goes first: it
    // becomes stale as soon as this write or the backing write that goes with it lands.
    if (auto holder = pending_drops_.page_holding(w.entry.file_id, w.entry.page_no)) pages.push_back(*holder);
    std::uint8_t flags = flag::kValid | (w.entry.dirty ? flag::kDirty : 0);
    const Entry& old = at(w.slot);
    const bool same_page = (old.flags & flag::kValid) && file_of(old) == w.entry.file_id &&
                           old.page_no() == w.entry.page_no;
    // A dirty write over the same file page, whose entry is on the chip and finished: after a
    // cut the FTL holds the old or the new data, both versions of that page the cache may
    // write back, so the entry needs no WRITING (and dropping it would lose an fsync'd older
    // version). The chip must say DIRTY before the data lands: clean -> dirty writes it first.
    const bool dirty_in_place = same_page && w.entry.dirty && !(old.flags & flag::kWriting) &&
                                (old.chip_flags & flag::kValid) && !(old.chip_flags & flag::kWriting);
    switch (scheme_) {
      case MetadataScheme::lufuw:
        if (dirty_in_place) {
          if (!(old.chip_flags & flag::kDirty)) pages.push_back(page);
          break;
        }
        assert(!window_.needs_room_for(page));
        window_.add(page, w.slot);
        flags |= flag::kWriting;
        unfinished_[w.slot] = 0;
        pages.push_back(page);
        break;
      case MetadataScheme::update_write_update:
        // The baseline writes twice whatever the write; only the flag follows the rule above.
        if (!dirty_in_place) flags |= flag::kWriting;
        unfinished_[w.slot] = 0;
        pages.push_back(page);
        break;
      case MetadataScheme::write_update:
        // A dirty entry on the chip is trusted after a crash: it must stop describing this
        // slot before other data lands in it. Dirty over the same page stays dirty: no write.
        if ((old.chip_flags & flag::kDirty) && !(same_page && w.entry.dirty)) pages.push_back(page);
        break;
    }
    if (dirty_in_place && old.flags == flags && scheme_ != MetadataScheme::update_write_update) continue;
    new_entries.push_back({&w, flags});
  }
  const auto set_new_entries = [&] {
    for (const auto& [w, flags] : new_entries) {
      set_entry(w->slot, w->entry.file_id, w->entry.page_no, flags);
      note_update(layout_.page_of(w->slot));
    }
  };
  // The clean mark goes before any data changes under it.
  if (clean_mark_on_chip_ && pages.empty() && !writes.empty()) pages.push_back(layout_.page_of(writes.front().slot));
  // A write-update entry reaches the chip only once its data is durable (after_data_write): the
  // writes before the data (the clean mark's, or a dirty entry's that must stop naming the slot)
  // carry the slots' entries as they were. Written with its new DIRTY entry, the first page a
  // clean open wrote trusted a slot whose data a cut then lost, and the restart wrote the slot's
  // zeros back over the file (the write-back crash oracle, seed 228 run 1).
  const bool entries_after_data = scheme_ == MetadataScheme::write_update;
  if (!entries_after_data) set_new_entries();
  FLASHDIR_TRY(write_pages(std::move(pages)));
  if (entries_after_data) set_new_entries();
  return Status::ok();
}

Status MetadataStore::after_data_write(std::span<const SlotIndex> slots, std::uint64_t ftl_seq) {
  FLASHDIR_TRY(check_alive());
  for (SlotIndex slot : slots) FLASHDIR_TRY(check_slot(slot));
  counters_.data_writes += slots.size();
  switch (scheme_) {
    case MetadataScheme::lufuw:
      for (SlotIndex slot : slots) {
        if (auto it = unfinished_.find(slot); it != unfinished_.end()) {
          it->second = ftl_seq;
          written_order_.emplace_back(ftl_seq, slot);
        }
      }
      on_durable(ftl_.durable_seq());
      return Status::ok();
    case MetadataScheme::update_write_update: {
      std::vector<SlotIndex> confirm;
      for (SlotIndex slot : slots) {
        if (unfinished_.contains(slot)) confirm.push_back(slot);
      }
      FLASHDIR_TRY(make_data_durable(confirm));
      std::vector<std::uint32_t> pages;
      for (SlotIndex slot : confirm) {
        finish(slot);
        pages.push_back(layout_.page_of(slot));
      }
      return write_pages(std::move(pages));
    }
    case MetadataScheme::write_update: {
      // clean -> dirty: the data must be on the chip before the entry that trusts it.
      std::vector<SlotIndex> turned_dirty;
      for (SlotIndex slot : slots) {
        const Entry& e = at(slot);
        if ((e.flags & flag::kDirty) && !(e.chip_flags & flag::kDirty)) turned_dirty.push_back(slot);
      }
      FLASHDIR_TRY(make_data_durable(turned_dirty));
      std::vector<std::uint32_t> pages;
      for (SlotIndex slot : turned_dirty) pages.push_back(layout_.page_of(slot));
      return write_pages(std::move(pages));
    }
  }
  return Status::ok();
}

void MetadataStore::on_durable(std::uint64_t durable_seq) {
  if (scheme_ != MetadataScheme::lufuw) return;
  while (!written_order_.empty() && written_order_.front().first <= durable_seq) {
    const auto [seq, slot] = written_order_.front();
    written_order_.pop_front();
    // Skipped: a slot finished otherwise (fsync, drop, a forced window) or written again since.
    if (auto it = unfinished_.find(slot); it != unfinished_.end() && it->second == seq) finish(slot);
  }
}

Status MetadataStore::finish_unfinished(const char* why) {
  on_durable(ftl_.durable_seq());
  std::vector<SlotIndex> in_flight;
  for (const auto& [slot, seq] : unfinished_) {
    if (seq == 0) return Status::invalid_argument(fmt::format("{} with slot {}'s data write still in flight", why, slot));
    in_flight.push_back(slot);
  }
  FLASHDIR_TRY(make_data_durable(in_flight));
  std::sort(in_flight.begin(), in_flight.end());
  for (SlotIndex slot : in_flight) finish(slot);
  // Every write it names is finished now.
  written_order_.clear();
  return Status::ok();
}

Status MetadataStore::commit() {
  FLASHDIR_TRY(check_alive());
  const std::size_t unfinished = unfinished_.size();
  FLASHDIR_TRY(finish_unfinished("a commit"));
  counters_.committed_writes += unfinished;
  if (scheme_ != MetadataScheme::lufuw || chip_window_ == window_.pages()) return Status::ok();
  // The page whose next write carries the most confirmations.
  const auto busiest = std::max_element(page_updates_.begin(), page_updates_.end());
  return write_page(static_cast<std::uint32_t>(busiest - page_updates_.begin()));
}

Status MetadataStore::mark_clean(std::span<const SlotIndex> slots) {
  FLASHDIR_TRY(check_alive());
  std::vector<std::uint32_t> pages;
  for (SlotIndex slot : slots) {
    FLASHDIR_TRY(check_slot(slot));
    Entry& e = at(slot);
    if (!(e.flags & flag::kValid) || !(e.flags & flag::kDirty)) continue;
    e.flags = static_cast<std::uint8_t>(e.flags & ~flag::kDirty);
    note_update(layout_.page_of(slot));
    // Forced in every scheme: a dirty entry left on the chip would be written back after a
    // crash, over whatever the backing file holds by then.
    pages.push_back(layout_.page_of(slot));
  }
  return write_pages(std::move(pages));
}

Status MetadataStore::sync_slots(std::span<const SlotIndex> slots) {
  FLASHDIR_TRY(check_alive());
  std::vector<SlotIndex> valid;
  for (SlotIndex slot : slots) {
    FLASHDIR_TRY(check_slot(slot));
    if (!(at(slot).flags & flag::kValid)) continue;
    if (auto it = unfinished_.find(slot); it != unfinished_.end() && it->second == 0) {
      return Status::invalid_argument(fmt::format("sync of slot {} while its data write is in flight", slot));
    }
    valid.push_back(slot);
  }
  FLASHDIR_TRY(make_data_durable(valid));
  std::vector<std::uint32_t> pages;
  for (SlotIndex slot : valid) {
    if (unfinished_.contains(slot)) finish(slot);
    const std::uint32_t page = layout_.page_of(slot);
    if (page_updates_[page] > 0) pages.push_back(page);
  }
  return write_pages(std::move(pages));
}

// ---------------------------------------------------------------------------------------------
// Drops

Status MetadataStore::drop(std::span<const SlotIndex> slots, Durability durability) {
  FLASHDIR_TRY(check_alive());
  for (SlotIndex slot : slots) FLASHDIR_TRY(check_slot(slot));
  std::vector<std::uint32_t> pages, must_write;
  std::vector<SlotIndex> unfinished;
  for (SlotIndex slot : slots) {
    Entry& e = at(slot);
    if (!(e.flags & flag::kValid)) continue;
    const std::uint32_t page = layout_.page_of(slot);
    // An unfinished write's entry leaves the window only once the chip no longer holds it as
    // VALID; a dirty entry must not survive on the chip (it would be written back).
    const bool was_unfinished = unfinished_.contains(slot);
    if (was_unfinished) unfinished.push_back(slot);
    if (was_unfinished || (e.chip_flags & flag::kDirty)) must_write.push_back(page);
    pending_drops_.add(page, {slot, file_of(e), e.page_no()});
    clear_entry(slot);
    note_update(page);
    pages.push_back(page);
  }
  if (durability == Durability::forced) must_write.insert(must_write.end(), pages.begin(), pages.end());
  if (pending_drops_.size() > kMaxPendingDrops) {
    const auto all = pending_drops_.all_pages();
    must_write.insert(must_write.end(), all.begin(), all.end());
  }
  FLASHDIR_TRY(write_pages(std::move(must_write)));
  for (SlotIndex slot : unfinished) finish(slot);
  return Status::ok();
}

Status MetadataStore::invalidate_file(std::uint64_t file_id, std::span<const SlotIndex> slots) {
  FLASHDIR_TRY(drop(slots, Durability::forced));
  return write_pages(pending_drops_.pages_of_file(file_id));
}

Status MetadataStore::forget(std::uint64_t file_id, std::uint64_t first_page, std::uint64_t count) {
  FLASHDIR_TRY(check_alive());
  std::vector<std::uint32_t> pages;
  for (std::uint64_t p = first_page; p < first_page + count; ++p) {
    if (auto holder = pending_drops_.page_holding(file_id, p)) pages.push_back(*holder);
  }
  return write_pages(std::move(pages));
}

Status MetadataStore::close_clean() {
  FLASHDIR_TRY(check_alive());
  FLASHDIR_TRY(finish_unfinished("clean close"));
  std::vector<std::uint32_t> pages = pending_drops_.all_pages();
  for (std::uint32_t p = 0; p < layout_.metadata_pages; ++p) {
    if (page_updates_[p] > 0) pages.push_back(p);
  }
  FLASHDIR_TRY(write_pages(std::move(pages)));
  // The mark last, in a page of its own: a cut before it leaves an unmarked newest page.
  FLASHDIR_TRY(write_page(0, /*clean_mark=*/true));
  if (Status s = ftl_.flush(); !s.is_ok()) return fail(s);  // the trims, and the image synced
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Inspection

std::size_t MetadataStore::ram_bytes() const {
  return entries_.size() * sizeof(Entry) + file_refs_.ram_bytes() + page_updates_.capacity() * sizeof(std::uint32_t) +
         unfinished_.bucket_count() * (1 + sizeof(std::pair<const SlotIndex, std::uint64_t>)) +
         written_order_.size() * sizeof(std::pair<std::uint64_t, SlotIndex>) +
         pending_drops_.ram_bytes();
}

std::optional<SlotEntry> MetadataStore::entry(SlotIndex slot) const {
  if (slot >= layout_.slot_count) return std::nullopt;
  const Entry& e = at(slot);
  if (!(e.flags & flag::kValid)) return std::nullopt;
  return SlotEntry{file_of(e), e.page_no(), (e.flags & flag::kDirty) != 0};
}

bool MetadataStore::writing(SlotIndex slot) const {
  return slot < layout_.slot_count && (at(slot).flags & flag::kWriting) != 0;
}

}  // namespace flashdir::cache
