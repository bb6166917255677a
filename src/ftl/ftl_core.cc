// Host operations and the FTL's lifecycle (format, clean open, close).
#include "ftl_core.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>

#include "mapcache/entry_cache.h"
#include "flashdir/format.h"
#include "translation_page.h"

namespace flashdir::ftl {
FtlCore::FtlCore(NandChip& chip, SimClock& clock, const FtlOptions& options, const FtlLayout& layout,
                 const LatencyProfile& latency)
    : chip_(chip),
      clock_(clock),
      options_(options),
      latency_(latency),
      layout_(layout),
      slots_(chip, layout_),
      blocks_(layout.geometry.block_count, layout.geometry.pages_per_block),
      gtd_(layout.translation_pages, kUnmappedPpn),
      chip_at_start_(chip.counters()) {
  checkpoint_interval_pages_ = options.checkpoint_interval_pages != 0
                                   ? options.checkpoint_interval_pages
                                   : std::max<std::uint64_t>(layout.geometry.page_count() / 32,
                                                             layout.geometry.pages_per_block);
}

FtlCore::~FtlCore() = default;

Status FtlCore::fail(Status s) {
  if (failed_.is_ok() && !s.is_ok()) failed_ = s;
  return s;
}

Status FtlCore::check_range(const char* operation, Lpn first, std::uint32_t count) const {
  if (count == 0) return Status::invalid_argument(fmt::format("{} of zero pages", operation));
  if (first.value >= layout_.logical_pages || count > layout_.logical_pages - first.value) {
    return Status::invalid_argument(fmt::format("{} of LPNs [{}, {}) is outside the logical space of {} pages",
                                                operation, first.value, first.value + count, layout_.logical_pages));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Lifecycle

Status FtlCore::format() {
  const Geometry& g = layout_.geometry;
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    if (chip_.next_page(BlockNumber(b)) > 0) {
      if (Status s = chip_.erase(BlockNumber(b)); !s.is_ok()) return fail(s);
    }
    if (!layout_.in_pool(BlockNumber(b))) blocks_.transition(BlockNumber(b), BlockState::reserved);
  }
  policy_ = make_gc_policy(options_.gc, blocks_);
  rebuild_policy_and_free_list();
  FLASHDIR_TRY(install_ram());
  checkpoint_slot_ = 1;  // so that the first checkpoint goes to slot 0
  return write_checkpoint();
}

Status FtlCore::open() {
  const std::uint64_t started = clock_.now_ns();
  std::vector<std::string> problems;
  auto loaded = slots_.load_newest(&problems);
  if (!loaded.is_ok()) {
    if (loaded.status().code() != StatusCode::not_found) return fail(loaded.status());
    std::string detail;
    for (const auto& p : problems) detail += "; " + p;
    return Status::corruption("no valid FTL checkpoint on the chip (not formatted for an FTL?)" + detail);
  }
  // Opening with another layout would misread every table (and a rebuild would drop data).
  FLASHDIR_TRY(check_checkpoint_layout(loaded->state, layout_, "the options ask for"));
  recovery_ = RecoveryReport{};
  recovery_.checkpoint_generation = loaded->state.generation;
  recovery_.steps.push_back(fmt::format("load checkpoint {} from slot {}: {:.3f} ms", loaded->state.generation,
                                        loaded->slot, static_cast<double>(clock_.now_ns() - started) / 1e6));
  checkpoint_slot_ = loaded->slot;
  checkpoint_generation_ = loaded->state.generation;
  checkpoint_pages_ = loaded->pages;

  // A checkpoint without a marker describes the chip exactly, unless the chip says otherwise.
  bool consistent = !loaded->marked;
  for (std::uint64_t b = layout_.pool_first_block; consistent && b < layout_.geometry.block_count; ++b) {
    const BlockInfo& info = loaded->state.blocks[b];
    const std::uint32_t programmed = chip_.next_page(BlockNumber(b));
    consistent = info.state == BlockState::free ? programmed == 0
                 : info.state == BlockState::open ? programmed < layout_.geometry.pages_per_block
                 : info.state == BlockState::closed ? programmed > 0
                                                    : false;
  }
  if (!consistent) return recover(loaded.value());

  restore(loaded->state);
  next_sequence_ = std::max(loaded->state.next_sequence, loaded->highest_sequence + 1);
  policy_ = make_gc_policy(options_.gc, blocks_);
  rebuild_policy_and_free_list();
  const std::uint64_t mapper_started = clock_.now_ns();
  FLASHDIR_TRY(install_ram());
  marker_pending_ = true;
  recovery_.clean = true;
  recovery_.steps.push_back(fmt::format("load mapping: {:.3f} ms", static_cast<double>(clock_.now_ns() - mapper_started) / 1e6));
  return Status::ok();
}

Status FtlCore::install_ram() {
  auto ram = ram::make_ram_manager(layout_, options_, latency_, *this, stats_);
  if (!ram.is_ok()) return fail(ram.status());
  ram_ = std::move(ram).value();
  return Status::ok();
}

Status FtlCore::close() {
  FLASHDIR_TRY(flush());
  FLASHDIR_TRY(write_checkpoint());
  failed_ = Status::invalid_argument("the FTL is closed");
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Translation pages (the mapper's I/O)

Status FtlCore::read(std::uint64_t tpn, std::span<std::uint32_t> entries) {
  assert(tpn < gtd_.size() && entries.size() == layout_.entries_per_translation_page);
  if (gtd_[tpn] == kUnmappedPpn) {
    std::fill(entries.begin(), entries.end(), kUnmappedPpn);
    return Status::ok();
  }
  const Geometry& g = layout_.geometry;
  std::vector<std::uint8_t>& data = translation_data_;  // scratch: no allocation per read
  std::vector<std::uint8_t>& oob = translation_oob_;
  data.resize(g.page_size_bytes);
  oob.resize(g.oob_size_bytes);
  for (int attempt = 1;; ++attempt) {
    if (Status s = chip_.read(Ppn(gtd_[tpn]), 1, data, oob); !s.is_ok()) return fail(s);
    auto record = format::decode_oob(oob);
    if (record.is_ok() && record->kind == format::PageKind::translation && record->logical_number == tpn &&
        format::xxh3(data) == record->data_hash) {
      break;
    }
    if (attempt == kReadAttempts) {
      return fail(Status::corruption(fmt::format("translation page {} at page {} fails verification", tpn, gtd_[tpn])));
    }
  }
  decode_translation_page(data, entries);
  ++stats_.translation_page_reads;
  if (in_collect_ || charge_to_gc_) ++stats_.gc_translation_page_reads;
  ++ram_page_ops_;  // into RAM
  return Status::ok();
}

Status FtlCore::write(std::uint64_t tpn, std::span<const std::uint32_t> entries) {
  assert(tpn < gtd_.size() && entries.size() == layout_.entries_per_translation_page);
  std::vector<std::uint8_t>& data = translation_data_;  // scratch: no allocation per write
  data.resize(layout_.geometry.page_size_bytes);
  encode_translation_page(entries, data);
  PageToProgram page;
  page.kind = format::PageKind::translation;
  page.logical_number = tpn;
  page.version = next_sequence_;  // its content is exact as of this program
  page.stream = Stream::translation;
  page.data = data;
  Ppn placed;
  if (Status s = program(std::span<const PageToProgram>(&page, 1), std::span<Ppn>(&placed, 1)); !s.is_ok()) {
    return fail(s);
  }
  if (gtd_[tpn] != kUnmappedPpn) invalidate(Ppn(gtd_[tpn]));
  gtd_[tpn] = static_cast<std::uint32_t>(placed.value);
  ++stats_.translation_page_writes;
  if (in_collect_ || charge_to_gc_) ++stats_.gc_translation_page_writes;
  ++ram_page_ops_;  // out of RAM
  unpersisted_trim_tpns_.erase(tpn);
  if (unpersisted_trim_tpns_.empty()) blocks_with_unpersisted_trims_.clear();
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Lost pages

void FtlCore::note_lost(Lpn lpn) {
  lost_lpns_.insert(lpn.value);
  newly_lost_lpns_.insert(lpn.value);
}

std::vector<Lpn> FtlCore::take_newly_lost_lpns() {
  std::vector<Lpn> lost;
  lost.reserve(newly_lost_lpns_.size());
  for (std::uint64_t lpn : newly_lost_lpns_) {
    if (lost_lpns_.count(lpn) != 0) lost.emplace_back(lpn);  // not rewritten since
  }
  newly_lost_lpns_.clear();
  return lost;
}

// ---------------------------------------------------------------------------------------------
// Stats

FtlStats FtlCore::stats() const {
  FtlStats s = stats_;
  const ChipCounters& now = chip_.counters();
  s.chip_page_reads = now.page_reads - chip_at_start_.page_reads;
  s.chip_page_programs = now.page_programs - chip_at_start_.page_programs;
  s.chip_block_erases = now.block_erases - chip_at_start_.block_erases;
  s.chip_busy_ns = now.busy_ns - chip_at_start_.busy_ns;
  const Geometry& g = layout_.geometry;
  std::uint64_t total = 0;
  s.erase_count_min = UINT32_MAX;
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    const std::uint32_t erases = chip_.erase_count(BlockNumber(b));
    s.erase_count_min = std::min(s.erase_count_min, erases);
    s.erase_count_max = std::max(s.erase_count_max, erases);
    total += erases;
  }
  s.erase_count_mean = static_cast<double>(total) / static_cast<double>(g.block_count);
  s.logical_pages = layout_.logical_pages;
  s.free_blocks = free_blocks();
  if (ram_) {
    const ram::RamUsage usage = ram_->usage();
    s.ram_budget_bytes = usage.budget_bytes;
    s.ram_mapping_bytes = usage.mapping_bytes;
    s.ram_buffer_bytes = usage.buffer_bytes;
  }
  return s;
}

}  // namespace flashdir::ftl
