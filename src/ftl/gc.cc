// Garbage collection: relocating what is still valid in a victim block, then erasing it; and
// CFTL's consolidation of a logical block into one physical block.
#include <algorithm>
#include <cassert>
#include <fmt/format.h>
#include <vector>

#include "mapcache/entry_cache.h"
#include "flashdir/format.h"
#include "ftl_core.h"
#include "translation_page.h"

namespace flashdir::ftl {
namespace {

// Whether a page read as (record, data) verifies as a data page; `data` is empty where the
// chip keeps no data.
bool verified_data_page(const Result<format::OobRecord>& record, ConstByteSpan data) {
  return record.is_ok() && record->kind == format::PageKind::data &&
         (data.empty() || format::xxh3(data) == record->data_hash);
}

}  // namespace

Result<Lpn> FtlCore::lpn_of_valid_page(Ppn page, const Result<format::OobRecord>& record) {
  // The record usually survives (damaged data); the mapping must agree with it.
  if (record.is_ok() && record->kind == format::PageKind::data && record->logical_number < layout_.logical_pages) {
    const Lpn lpn(record->logical_number);
    auto ppn = ram_->lookup(lpn, Access::internal);
    if (!ppn.is_ok()) return ppn.status();
    if (*ppn == page.value) return lpn;
  }
  // Otherwise the translation pages on flash name it, unless only a dirty cached entry does
  // (a page programmed since its translation page was last written), which this cannot find.
  std::vector<std::uint32_t> entries(layout_.entries_per_translation_page);
  for (std::uint64_t tpn = 0; tpn < gtd_.size(); ++tpn) {
    if (gtd_[tpn] == kUnmappedPpn) continue;
    FLASHDIR_TRY(read(tpn, entries));
    for (std::uint64_t i = 0; i < entries.size(); ++i) {
      if (entries[i] != page.value) continue;
      const Lpn lpn = layout_.first_lpn_of_tpn(tpn) + i;
      auto ppn = ram_->lookup(lpn, Access::internal);
      if (!ppn.is_ok()) return ppn.status();
      if (*ppn == page.value) return lpn;
    }
  }
  return Status::corruption(fmt::format(
      "GC cannot move valid page {}: it fails verification on every read, and no translation page on flash "
      "names the LPN it holds",
      page.value));
}

Status FtlCore::collect(BlockNumber victim) {
  const std::uint64_t started = clock_.now_ns();
  policy_->block_removed(victim);
  ++stats_.gc_runs;
  const bool translation = blocks_.info(victim).kind == BlockKind::translation;
  // Translation-page I/O while collecting is GC's (FtlCore::read/write count it); so is the
  // later write-back of pages only the relocations dirtied (the schemes charge it).
  in_collect_ = true;
  const Status collected = translation ? collect_translation_block(victim) : collect_data_block(victim);
  in_collect_ = false;
  FLASHDIR_TRY(collected);
  if (blocks_.info(victim).valid_pages != 0) {
    return fail(Status::corruption(fmt::format("GC left {} valid pages in block {}",
                                               blocks_.info(victim).valid_pages, victim.value)));
  }
  FLASHDIR_TRY(erase_block(victim));
  ram_->note_gc(translation, clock_.now_ns() - started);  // APS's cost model measures GC online
  return Status::ok();
}

Status FtlCore::collect_translation_block(BlockNumber victim) {
  const Geometry& g = layout_.geometry;
  std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
  std::vector<std::uint32_t> entries(layout_.entries_per_translation_page);
  for (std::uint32_t i = 0; i < g.pages_per_block; ++i) {
    const Ppn page = g.page_at(victim, i);
    if (!blocks_.is_valid(page)) continue;
    if (Status s = chip_.read(page, 1, {}, oob); !s.is_ok()) return fail(s);
    auto record = format::decode_oob(oob);
    if (!record.is_ok() || record->kind != format::PageKind::translation ||
        record->logical_number >= gtd_.size() || gtd_[record->logical_number] != page.value) {
      return fail(Status::corruption(fmt::format("valid page {} of translation block {} is not a live translation page",
                                                 page.value, victim.value)));
    }
    // Moving a translation page rewrites it with the current mapping (flash content plus dirty
    // cached entries), so its new sequence number never carries stale entries (doc/ftl.md).
    FLASHDIR_TRY(read(record->logical_number, entries));
    ram_->merge_dirty(record->logical_number, entries);
    FLASHDIR_TRY(write(record->logical_number, entries));
    ++stats_.gc_translation_copies;
  }
  return Status::ok();
}

Status FtlCore::collect_data_block(BlockNumber victim) {
  const Geometry& g = layout_.geometry;
  const std::size_t page_bytes = g.page_size_bytes;
  const bool keep_data = chip_.stores_data();
  GcScratch& scratch = gc_scratch_;  // every byte and record used below is read first
  std::vector<std::uint8_t>& data = scratch.data;
  std::vector<std::uint8_t>& oob = scratch.oob;
  std::vector<format::OobRecord>& records = scratch.records;
  data.resize(keep_data ? g.block_size_bytes() : 0);
  oob.resize(std::size_t{g.oob_size_bytes} * g.pages_per_block);
  records.resize(g.pages_per_block);

  // Read every valid page (runs of consecutive ones at a time) and verify it; a page failing
  // verification is read again, alone, as the host read path does (a transient bit flip).
  std::vector<Relocation> lost;
  std::vector<Ppn> lost_pages;
  for (std::uint32_t i = 0; i < g.pages_per_block;) {
    if (!blocks_.is_valid(g.page_at(victim, i))) {
      ++i;
      continue;
    }
    std::uint32_t n = 1;
    while (i + n < g.pages_per_block && blocks_.is_valid(g.page_at(victim, i + n))) ++n;
    const ByteSpan run_data = keep_data ? ByteSpan(data).subspan(i * page_bytes, n * page_bytes) : ByteSpan();
    const ByteSpan run_oob = ByteSpan(oob).subspan(std::size_t{i} * g.oob_size_bytes, std::size_t{n} * g.oob_size_bytes);
    if (Status s = chip_.read(g.page_at(victim, i), n, run_data, run_oob); !s.is_ok()) return fail(s);
    for (std::uint32_t k = i; k < i + n; ++k) {
      const Ppn page = g.page_at(victim, k);
      const ByteSpan page_data = keep_data ? ByteSpan(data).subspan(k * page_bytes, page_bytes) : ByteSpan();
      const ByteSpan page_oob = ByteSpan(oob).subspan(std::size_t{k} * g.oob_size_bytes, g.oob_size_bytes);
      auto record = format::decode_oob(page_oob);
      for (int attempt = 1; !verified_data_page(record, page_data) && attempt < kReadAttempts; ++attempt) {
        if (Status s = chip_.read(page, 1, page_data, page_oob); !s.is_ok()) return fail(s);
        record = format::decode_oob(page_oob);
      }
      if (verified_data_page(record, page_data)) {
        records[k] = record.value();
        continue;
      }
      // Unreadable: its LPN is lost, and GC carries on (doc/ftl.md, "Lost pages").
      auto lpn = lpn_of_valid_page(page, record);
      if (!lpn.is_ok()) return fail(lpn.status());
      lost.push_back({*lpn, kLostPpn});
      lost_pages.push_back(page);
    }
    i += n;
  }
  if (!lost.empty()) {
    FLASHDIR_TRY(ram_->relocate(lost));
    for (std::size_t k = 0; k < lost.size(); ++k) {
      invalidate(lost_pages[k]);
      note_lost(lost[k].lpn);
      // As for a trim: the victim is erased only once the loss is in a translation page, or
      // recovery would map the LPN into whatever the block holds next.
      unpersisted_trim_tpns_.insert(layout_.tpn_of(lost[k].lpn));
      blocks_with_unpersisted_trims_.insert(victim.value);
    }
  }

  // CFTL: a read-hot, write-cold logical block moves whole into a fresh block instead. In `gc`
  // mode only one the victim holds at least half of, so that the copies GC makes anyway pay for
  // most of it (doc/ftl.md). The fresh block comes out of the reserve, so one per victim: the
  // rest of the reserve covers this victim's relocations and the translation pages they dirty.
  if (options_.cftl.consolidation != ConsolidationMode::off && free_blocks() >= kGcReserveBlocks) {
    const std::size_t share_needed = options_.cftl.consolidation == ConsolidationMode::gc ? (g.pages_per_block + 1) / 2 : 1;
    std::vector<std::uint64_t>& lbns = scratch.lbns;
    lbns.clear();
    for (std::uint32_t i = 0; i < g.pages_per_block; ++i) {
      if (blocks_.is_valid(g.page_at(victim, i))) lbns.push_back(records[i].logical_number / g.pages_per_block);
    }
    std::sort(lbns.begin(), lbns.end());
    for (auto run = lbns.begin(); run != lbns.end();) {
      const auto end = std::upper_bound(run, lbns.end(), *run);
      if (static_cast<std::size_t>(end - run) >= share_needed && ram_->wants_block_mapping(*run)) {
        FLASHDIR_TRY(consolidate(*run));
        break;
      }
      run = end;
    }
  }

  std::vector<PageToProgram>& moves = scratch.moves;
  std::vector<Ppn>& from = scratch.from;
  moves.clear();
  from.clear();
  for (std::uint32_t i = 0; i < g.pages_per_block; ++i) {
    const Ppn page = g.page_at(victim, i);
    if (!blocks_.is_valid(page)) continue;
    PageToProgram p;
    p.kind = format::PageKind::data;
    p.logical_number = records[i].logical_number;
    p.version = records[i].version;  // a copy keeps the version of what it moves
    p.stream = Stream::gc;
    if (keep_data) p.data = ConstByteSpan(data).subspan(i * page_bytes, page_bytes);
    moves.push_back(p);
    from.push_back(page);
  }
  if (moves.empty()) return Status::ok();
  std::vector<Ppn>& placed = scratch.placed;
  placed.resize(moves.size());
  FLASHDIR_TRY(program(moves, placed));
  std::vector<Relocation>& relocations = scratch.relocations;
  relocations.clear();
  for (std::size_t k = 0; k < moves.size(); ++k) {
    invalidate(from[k]);
    relocations.push_back({Lpn(moves[k].logical_number), static_cast<std::uint32_t>(placed[k].value)});
  }
  stats_.gc_data_copies += moves.size();
  return ram_->relocate(relocations);  // the request that needed the space settles the RAM budget
}

Status FtlCore::consolidate(std::uint64_t lbn) {
  const Geometry& g = layout_.geometry;
  const std::uint32_t P = g.pages_per_block;
  const std::uint64_t first = lbn * P;
  if (first + P > layout_.logical_pages) return Status::ok();

  std::vector<std::uint32_t> ppns(P);
  bool aligned = true;
  for (std::uint32_t i = 0; i < P; ++i) {
    auto ppn = ram_->lookup(Lpn(first + i), Access::internal);
    if (!ppn.is_ok()) return ppn.status();
    if (!is_physical(*ppn)) return Status::ok();  // a block with holes (or lost pages) cannot be block-mapped
    ppns[i] = *ppn;
    aligned = aligned && ppns[i] == ppns[0] + i && g.page_in_block(Ppn(ppns[0])) == 0;
  }
  if (aligned) {  // already laid out whole: converting costs nothing
    ram_->register_block_mapping(lbn, g.block_of(Ppn(ppns[0])));
    ++stats_.conversions_to_block;
    return Status::ok();
  }

  const bool keep_data = chip_.stores_data();
  std::vector<std::uint8_t> data(keep_data ? g.page_size_bytes : 0), oob(g.oob_size_bytes);
  std::vector<std::uint8_t> all_data(keep_data ? g.block_size_bytes() : 0);
  std::vector<PageToProgram> pages(P);
  for (std::uint32_t i = 0; i < P; ++i) {
    const Ppn source(ppns[i]);
    for (int attempt = 1;; ++attempt) {
      if (Status s = chip_.read(source, 1, data, oob); !s.is_ok()) return fail(s);
      auto record = format::decode_oob(oob);
      if (verified_data_page(record, data) && record->logical_number == first + i) {
        pages[i].version = record->version;
        break;
      }
      // Consolidation is optional: the page is left to the host read (an error) and to GC,
      // which loses it when it must move it.
      if (attempt == kReadAttempts) return Status::ok();
    }
    pages[i].kind = format::PageKind::data;
    pages[i].logical_number = first + i;
    pages[i].stream = Stream::consolidation;
    if (keep_data) {
      std::copy(data.begin(), data.end(), all_data.begin() + static_cast<std::ptrdiff_t>(std::size_t{i} * g.page_size_bytes));
      pages[i].data = ConstByteSpan(all_data).subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes);
    }
  }
  assert(!frontiers_[static_cast<std::size_t>(Stream::consolidation)]);
  std::vector<Ppn> placed(P);
  FLASHDIR_TRY(program(pages, placed));
  const BlockNumber block = g.block_of(placed[0]);
  std::vector<Relocation> relocations;
  for (std::uint32_t i = 0; i < P; ++i) {
    assert(placed[i] == g.page_at(block, i));
    invalidate(Ppn(ppns[i]));
    relocations.push_back({Lpn(first + i), static_cast<std::uint32_t>(placed[i].value)});
  }
  FLASHDIR_TRY(ram_->relocate(relocations));
  ram_->register_block_mapping(lbn, block);
  ++stats_.conversions_to_block;
  stats_.consolidation_copies += P;
  return Status::ok();  // the calling request settles the RAM budget
}

Status FtlCore::write_back_mapping() {
  FLASHDIR_TRY(ensure_free_blocks(0, TranslationRoom::all));
  if (Status s = ram_->write_back_all(); !s.is_ok()) return fail(s);
  unpersisted_trim_tpns_.clear();
  blocks_with_unpersisted_trims_.clear();
  return Status::ok();
}

Status FtlCore::persist_trims() {
  const std::vector<std::uint64_t> tpns(unpersisted_trim_tpns_.begin(), unpersisted_trim_tpns_.end());
  for (std::uint64_t tpn : tpns) FLASHDIR_TRY(ram_->write_back(tpn));
  unpersisted_trim_tpns_.clear();
  blocks_with_unpersisted_trims_.clear();
  return Status::ok();
}

}  // namespace flashdir::ftl
