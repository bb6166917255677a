#include "replay.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "mapcache/entry_cache.h"
#include "flashdir/format.h"
#include "translation_page.h"

namespace flashdir::ftl {
namespace {

struct Event {
  std::uint64_t sequence;
  std::uint32_t ppn;
  format::PageKind kind;
  std::uint64_t logical;
  std::uint64_t version;
};

BlockKind kind_of_page(const format::OobRecord& record) {
  if (record.kind == format::PageKind::translation) return BlockKind::translation;
  switch (record.aux) {  // data pages record their write stream (allocation.cc)
    case 0: return BlockKind::hot_data;
    case 1: return BlockKind::cold_data;
    default: return BlockKind::gc_data;
  }
}

// Reads translation page content from `ppn`, verified (read again while it fails: a bit flip
// may be transient).
Status read_translation(NandChip& chip, const FtlLayout& layout, std::uint32_t ppn, std::uint64_t tpn,
                        std::vector<std::uint32_t>& entries) {
  const Geometry& g = layout.geometry;
  std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
  for (int attempt = 1;; ++attempt) {
    FLASHDIR_TRY(chip.read(Ppn(ppn), 1, data, oob));
    auto record = format::decode_oob(oob);
    if (record.is_ok() && record->kind == format::PageKind::translation && record->logical_number == tpn &&
        format::xxh3(data) == record->data_hash) {
      break;
    }
    if (attempt == kReadAttempts) {
      return Status::corruption(fmt::format(
          "translation page {} at page {} fails verification on every read: media damage; fsck -y rebuilds the "
          "mapping without it",
          tpn, ppn));
    }
  }
  entries.resize(layout.entries_per_translation_page);
  decode_translation_page(data, entries);
  return Status::ok();
}

enum class Verdict {
  verified,
  bad_data,    // the record verifies, the data does not match its hash
  unreadable,  // no valid record (torn, noise, damaged), or a checkpoint record in the pool
};

struct ScannedPage {
  Verdict verdict = Verdict::unreadable;
  format::OobRecord record;  // unless unreadable
};

// Verifies a page read into (data, oob), reading it again alone while it fails, as host reads
// do: a bit flip may be transient. With `data` empty, the record alone.
Result<ScannedPage> verify_page(NandChip& chip, Ppn page, ByteSpan data, ByteSpan oob) {
  ScannedPage scanned;
  for (int attempt = 1;; ++attempt) {
    auto record = format::decode_oob(oob);
    if (!record.is_ok() || record->kind == format::PageKind::checkpoint) {
      scanned.verdict = Verdict::unreadable;
    } else {
      scanned.record = record.value();
      // Host pages on a metadata-only chip carry no data (hash 0); everything else must verify.
      const bool check_data = !data.empty() && (chip.stores_data() || record->kind != format::PageKind::data);
      scanned.verdict = !check_data || format::xxh3(data) == record->data_hash ? Verdict::verified : Verdict::bad_data;
    }
    if (scanned.verdict == Verdict::verified || attempt == kReadAttempts) return scanned;
    FLASHDIR_TRY(chip.read(page, 1, data, oob));
  }
}

// Scans the blocks that may hold pages programmed at or after `from_sequence` and collects
// those pages as events; reads their data too with `verify_data`.
Status scan(NandChip& chip, const FtlLayout& layout, std::uint64_t from_sequence, bool whole_chip, bool verify_data,
            std::vector<Event>& events, Replayed& out) {
  const Geometry& g = layout.geometry;
  // Data is read on every backend: a metadata-only chip keeps the translation pages' data.
  std::vector<std::uint8_t> data(verify_data ? g.block_size_bytes() : 0);
  std::vector<std::uint8_t> oob(std::size_t{g.oob_size_bytes} * g.pages_per_block);
  for (std::uint64_t b = layout.pool_first_block; b < g.block_count; ++b) {
    const BlockNumber block(b);
    const std::uint32_t programmed = chip.next_page(block);
    if (programmed == 0) {
      out.rewritten[b] = true;
      continue;
    }
    if (!whole_chip) {
      // Pages of a block are programmed in sequence order: if its last page predates the
      // starting point, so does the whole block.
      const ByteSpan last = ByteSpan(oob).first(g.oob_size_bytes);
      FLASHDIR_TRY(chip.read(g.page_at(block, programmed - 1), 1, {}, last));
      auto record = format::decode_oob(last);
      if (record.is_ok() && record->sequence < from_sequence) continue;
    }
    out.scanned[b] = true;
    ++out.report.scanned_blocks;
    const ByteSpan run_data = verify_data ? ByteSpan(data).first(std::size_t{programmed} * g.page_size_bytes) : ByteSpan();
    const ByteSpan run_oob = ByteSpan(oob).first(std::size_t{programmed} * g.oob_size_bytes);
    FLASHDIR_TRY(chip.read(g.first_page(block), programmed, run_data, run_oob));
    std::vector<ScannedPage> pages(programmed);
    std::int64_t last_whole_record = -1;  // torn pages can only follow it
    for (std::uint32_t i = 0; i < programmed; ++i) {
      const ByteSpan page_data = verify_data ? run_data.subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes) : ByteSpan();
      auto page = verify_page(chip, g.page_at(block, i), page_data,
                              run_oob.subspan(std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes));
      if (!page.is_ok()) return page.status();
      pages[i] = page.value();
      if (pages[i].verdict != Verdict::unreadable) last_whole_record = i;
    }
    out.rewritten[b] = pages[0].verdict == Verdict::unreadable || pages[0].record.sequence >= from_sequence;
    for (std::uint32_t i = 0; i < programmed; ++i) {
      const ScannedPage& page = pages[i];
      const format::OobRecord& record = page.record;
      const std::uint32_t ppn = static_cast<std::uint32_t>(g.page_at(block, i).value);
      if (page.verdict != Verdict::verified) {
        ++out.report.damaged_pages;
        if (out.damaged_blocks.empty() || out.damaged_blocks.back() != b) out.damaged_blocks.push_back(b);
      }
      switch (page.verdict) {
        case Verdict::verified: break;
        case Verdict::bad_data:
          // The record is whole, so the data landed whole before it (a torn program tears the
          // record too): the medium damaged it. A data page's LPN then holds lost data, unless
          // a newer version replaces it; a translation page's content is unknown.
          if (record.sequence < from_sequence) continue;
          if (record.kind == format::PageKind::data) {
            events.push_back({record.sequence, kLostPpn, record.kind, record.logical_number, record.version});
          } else if (!whole_chip) {
            return Status::corruption(fmt::format(
                "translation page {} at page {} (block {}, page {}) fails its data hash on every read: media damage; "
                "fsck -y rebuilds the mapping without it",
                record.logical_number, ppn, b, i));
          }
          continue;
        case Verdict::unreadable:
          // Only the last programmed pages of a block can be torn (a program cut short, or an
          // erase leaving noise): a damaged page that whole records follow (a later program
          // completed) is media damage, and its content, whatever it was, cannot be skipped
          // silently. fsck's damage rule (src/check/damage_rule.cc) draws the same line.
          if (static_cast<std::int64_t>(i) > last_whole_record || whole_chip) continue;
          return Status::corruption(fmt::format(
              "page {} (block {}, page {}) fails verification on every read, yet pages with whole records follow it "
              "in its block: media damage, not a power cut; fsck -y rebuilds the mapping without it",
              ppn, b, i));
      }
      if (out.scanned_kind[b] == BlockKind::none) out.scanned_kind[b] = kind_of_page(record);
      if (!out.page_owner.empty()) {
        out.page_owner[ppn] = record.kind == format::PageKind::translation
                                  ? kTranslationOwner
                                  : static_cast<std::uint32_t>(std::min<std::uint64_t>(record.logical_number, kUnmappedPpn));
      }
      out.highest_sequence = std::max(out.highest_sequence, record.sequence);
      if (record.sequence < from_sequence) continue;
      events.push_back({record.sequence, ppn, record.kind, record.logical_number, record.version});
    }
  }
  return Status::ok();
}

// Sparse replay: the checkpoint's content of every translation page that `events` touch, into
// `out.map` and `out.checkpoint_content`; `out.not_sparse` says why when one cannot be read.
// A copy in a block erased since is gone (GC moved the page, and the move is among the
// events); whatever else fails is left for the full replay to report.
Status load_touched_pages(NandChip& chip, const FtlLayout& layout, const std::vector<Event>& events, Replayed& out) {
  const std::uint64_t E = layout.entries_per_translation_page;
  std::vector<std::uint64_t> touched;
  for (const Event& e : events) {
    if (e.kind == format::PageKind::translation) {
      if (e.logical < layout.translation_pages) touched.push_back(e.logical);
    } else if (e.logical < layout.logical_pages) {
      touched.push_back(e.logical / E);
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (std::uint64_t tpn : touched) {
    std::vector<std::uint32_t> entries(E, kUnmappedPpn);
    const std::uint32_t ppn = out.gtd[tpn];
    if (ppn != kUnmappedPpn) {
      if (ppn >= layout.geometry.page_count()) {
        out.not_sparse = fmt::format("the checkpoint maps translation page {} beyond the chip", tpn);
        return Status::ok();
      }
      if (out.rewritten[layout.geometry.block_of(Ppn(ppn)).value]) {
        out.not_sparse = fmt::format("the checkpoint's copy of translation page {} was erased since", tpn);
        return Status::ok();
      }
      if (Status read = read_translation(chip, layout, ppn, tpn, entries); !read.is_ok()) {
        out.not_sparse = read.to_string();
        return Status::ok();
      }
    }
    const std::uint64_t first = tpn * E;
    for (std::uint64_t i = 0; i < E && first + i < out.map.size(); ++i) out.map[first + i] = entries[i];
    out.checkpoint_content.emplace(tpn, std::move(entries));
  }
  return Status::ok();
}

}  // namespace

Result<Replayed> replay_mapping(NandChip& chip, const FtlLayout& layout, const CheckpointState* base,
                                const ReplayOptions& options) {
  Replayed out;
  if (options.record_page_owners) out.page_owner.assign(layout.geometry.page_count(), kUnmappedPpn);
  const std::uint64_t E = layout.entries_per_translation_page;
  out.map.assign(layout.logical_pages, kUnmappedPpn);
  out.gtd = base != nullptr ? base->gtd : std::vector<std::uint32_t>(layout.translation_pages, kUnmappedPpn);
  out.scanned.assign(layout.geometry.block_count, false);
  out.scanned_kind.assign(layout.geometry.block_count, BlockKind::none);
  out.rewritten.assign(layout.geometry.block_count, false);

  std::vector<Event> events;
  FLASHDIR_TRY(scan(chip, layout, base != nullptr ? base->next_sequence : 0, base == nullptr, options.verify_data, events, out));
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.sequence < b.sequence; });

  // The starting content of every translation page that no later translation page replaces.
  std::vector<bool> replaced(layout.translation_pages, false);
  for (const Event& e : events) {
    if (e.kind == format::PageKind::translation && e.logical < replaced.size()) replaced[e.logical] = true;
  }
  std::vector<std::uint32_t> entries;
  auto apply_translation = [&](std::uint64_t tpn) {
    const std::uint64_t first = tpn * E;
    for (std::uint64_t i = 0; i < E && first + i < out.map.size(); ++i) out.map[first + i] = entries[i];
  };
  if (options.sparse && base != nullptr) {
    FLASHDIR_TRY(load_touched_pages(chip, layout, events, out));
    if (!out.not_sparse.empty()) return out;
  } else {
    for (std::uint64_t tpn = 0; tpn < layout.translation_pages; ++tpn) {
      if (replaced[tpn] || out.gtd[tpn] == kUnmappedPpn) continue;
      FLASHDIR_TRY(read_translation(chip, layout, out.gtd[tpn], tpn, entries));
      apply_translation(tpn);
    }
  }

  absl::flat_hash_map<std::uint64_t, std::uint64_t> versions;  // LPN -> version mapped since its last translation page
  std::set<std::uint64_t> dirty;
  for (const Event& e : events) {
    if (e.kind == format::PageKind::translation) {
      if (e.logical >= layout.translation_pages) {
        ++out.report.damaged_pages;
        continue;
      }
      FLASHDIR_TRY(read_translation(chip, layout, e.ppn, e.logical, entries));
      apply_translation(e.logical);
      out.gtd[e.logical] = e.ppn;
      for (std::uint64_t i = 0; i < E; ++i) versions.erase(e.logical * E + i);
      dirty.erase(e.logical);
      ++out.report.replayed_translation_pages;
      continue;
    }
    ++out.host_pages_seen;
    if (e.logical >= layout.logical_pages) {
      ++out.report.damaged_pages;
      continue;
    }
    auto [it, inserted] = versions.try_emplace(e.logical, e.version);
    if (!inserted) {
      if (e.version < it->second) {
        ++out.report.stale_versions;
        continue;
      }
      it->second = e.version;
    }
    out.map[e.logical] = e.ppn;
    out.highest_version = std::max(out.highest_version, e.version);
    dirty.insert(e.logical / E);
    ++out.report.replayed_data_pages;
  }
  out.dirty_tpns.assign(dirty.begin(), dirty.end());
  out.mapped_since_translation.reserve(versions.size());
  for (const auto& [lpn, version] : versions) out.mapped_since_translation.push_back(lpn);
  std::sort(out.mapped_since_translation.begin(), out.mapped_since_translation.end());
  return out;
}

}  // namespace flashdir::ftl
