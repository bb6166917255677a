// Host requests: writes and trims through the device RAM, flush, and the bookkeeping that
// keeps the RAM budget and the durable watermark (reads: host_reads.cc).
#include <algorithm>
#include <cassert>
#include <optional>
#include <fmt/format.h>

#include "mapcache/entry_cache.h"
#include "flashdir/format.h"
#include "ftl_core.h"

namespace flashdir::ftl {
// ---------------------------------------------------------------------------------------------
// Programming host pages

Status FtlCore::program_host_pages(std::span<const HostPage> pages) {
  // A block's worth at a time: the free blocks one call asks GC for must stay within what GC
  // can free on a full device, whatever the size of a bypassing write or of a drained buffer.
  const std::size_t chunk = layout_.geometry.pages_per_block;
  for (std::size_t first = 0; first < pages.size(); first += chunk) {
    FLASHDIR_TRY(program_host_chunk(pages.subspan(first, std::min(chunk, pages.size() - first))));
  }
  return Status::ok();
}

Status FtlCore::program_host_chunk(std::span<const HostPage> pages) {
  const Geometry& g = layout_.geometry;
  // Room for the pages whichever host frontier they go to.
  FLASHDIR_TRY(ensure_free_blocks(blocks_needed(Stream::hot, pages.size()) + blocks_needed(Stream::cold, pages.size())));
  std::vector<std::uint32_t>& old = old_ppns_;
  old.resize(pages.size());
  for (std::size_t i = 0; i < pages.size(); ++i) {
    auto ppn = ram_->lookup(pages[i].lpn, Access::flush);
    if (!ppn.is_ok()) return fail(ppn.status());
    old[i] = *ppn;
  }
  std::vector<PageToProgram>& programs = host_programs_;
  programs.resize(pages.size());
  for (std::size_t i = 0; i < pages.size(); ++i) {
    bool hot = pages[i].hint == WriteHint::hot;
    if (pages[i].hint == WriteHint::none && is_physical(old[i])) {
      hot = policy_->is_hot_write(g.block_of(Ppn(old[i])), host_time_ + i);
    }
    programs[i].kind = format::PageKind::data;
    programs[i].logical_number = pages[i].lpn.value;
    programs[i].version = pages[i].version;
    programs[i].stream = hot ? Stream::hot : Stream::cold;
    programs[i].data = pages[i].data;
    stats_.hot_write_pages += hot ? 1 : 0;
  }
  std::vector<Ppn>& placed = host_placed_;
  placed.resize(pages.size());
  if (Status s = program(programs, placed); !s.is_ok()) return fail(s);
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (is_physical(old[i])) invalidate(Ppn(old[i]));
    ram_->set(pages[i].lpn, static_cast<std::uint32_t>(placed[i].value));
    ++host_time_;
  }
  return Status::ok();
}

Status FtlCore::program_buffered(std::span<const ram::BufferedPage> pages) {
  std::vector<HostPage>& host = host_pages_;
  host.resize(pages.size());
  for (std::size_t i = 0; i < pages.size(); ++i) host[i] = {pages[i].lpn, pages[i].version, pages[i].data, pages[i].hint};
  // The pages have left the RAM: failing to program them loses acknowledged writes, so the
  // device stops (every later request fails) rather than carry on without them.
  if (Status s = program_host_pages(host); !s.is_ok()) return fail(s);
  ram_page_ops_ += pages.size();  // out of RAM
  for (const auto& page : pages) release(page.pending_since);
  return Status::ok();
}

Status FtlCore::settle() {
  std::vector<ram::BufferedPage>& victims = evicted_pages_;
  for (;;) {
    if (Status s = ram_->evict(victims); !s.is_ok()) return fail(s);
    if (victims.empty()) return Status::ok();
    FLASHDIR_TRY(program_buffered(victims));
  }
}

std::uint64_t FtlCore::watermark() const {
  return buffered_versions_.empty() ? write_sequence_ : buffered_versions_.begin()->first - 1;
}

void FtlCore::release(std::uint64_t version) {
  auto it = buffered_versions_.find(version);
  assert(it != buffered_versions_.end());
  if (--it->second == 0) buffered_versions_.erase(it);
}

void FtlCore::finish_request(std::uint64_t started_ns) {
  ram_->end_request();
  const ram::RamUsage usage = ram_->usage();
  assert((usage.budget_bytes == 0 || usage.total() <= usage.budget_bytes) && "RAM over budget between requests");
  stats_.ram_peak_mapping_bytes = std::max(stats_.ram_peak_mapping_bytes, usage.mapping_bytes);
  stats_.ram_peak_buffer_bytes = std::max(stats_.ram_peak_buffer_bytes, usage.buffer_bytes);
  if (usage.budget_bytes > 0) {
    stats_.ram_mapping_share_sum += static_cast<double>(usage.mapping_bytes) / static_cast<double>(usage.budget_bytes);
  }
  // RAM time: every page moved into or out of the device RAM (papers/treeftl.txt IV-A).
  const std::uint64_t ram_ns = ram_page_ops_ * options_.ram.ram_page_op_ns;
  stats_.ram_page_ops += ram_page_ops_;
  stats_.ram_ns += ram_ns;
  ram_page_ops_ = 0;
  clock_.advance_ns(ram_ns);
  durable_sequence_ = watermark();
  stats_.service_ns += clock_.now_ns() - started_ns;
}

// ---------------------------------------------------------------------------------------------
// Requests

Result<std::uint64_t> FtlCore::write(Lpn first, std::uint32_t count, ConstByteSpan data, WriteHint hint,
                                     Durability durability) {
  FLASHDIR_TRY(check_alive());
  FLASHDIR_TRY(check_range("write", first, count));
  const std::size_t page_bytes = layout_.geometry.page_size_bytes;
  if (!(data.size() == count * page_bytes || (data.empty() && !chip_.stores_data()))) {
    return Status::invalid_argument(fmt::format("write of {} pages needs {} bytes of data, got {}", count,
                                                count * page_bytes, data.size()));
  }
  const std::uint64_t started = clock_.now_ns();
  ram_->note_access(first, count, Access::write);
  const std::uint64_t version = ++write_sequence_;
  const bool keep_data = chip_.stores_data();
  // Written, an LPN is no longer lost, whether its page is buffered or programmed.
  if (!lost_lpns_.empty()) lost_lpns_.erase(lost_lpns_.lower_bound(first.value), lost_lpns_.lower_bound(first.value + count));
  if (durability == Durability::buffered && ram_->buffers_write(count)) {
    for (std::uint32_t i = 0; i < count; ++i) {
      ram::BufferedPage page;
      page.lpn = first + i;
      page.version = page.pending_since = version;
      page.hint = hint;
      if (keep_data) page.data.assign(data.begin() + static_cast<std::ptrdiff_t>(i * page_bytes),
                                      data.begin() + static_cast<std::ptrdiff_t>((i + 1) * page_bytes));
      auto replaced = ram_->put(std::move(page));
      if (!replaced.is_ok()) return fail(replaced.status());
      // A replaced page's writes stay pending with this one: the hold it had carries over.
      if (!*replaced) hold(version);
      ++ram_page_ops_;  // into RAM
    }
  } else {
    // A block's worth at a time, as program_host_pages goes. A buffered copy of a page is older
    // and must never reach flash after this write: it is dropped once the page is programmed,
    // so that if programming fails part-way the pages not yet written keep their acknowledged
    // copy (nothing programs the buffer in between).
    std::vector<HostPage>& pages = host_pages_;
    for (std::uint32_t done = 0; done < count;) {
      const std::uint32_t n = std::min(count - done, layout_.geometry.pages_per_block);
      pages.resize(n);
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::size_t at = std::size_t{done + i} * page_bytes;
        pages[i] = {first + done + i, version, keep_data ? data.subspan(at, page_bytes) : ConstByteSpan(), hint};
      }
      FLASHDIR_TRY(program_host_chunk(pages));
      for (std::uint32_t i = 0; i < n; ++i) {
        if (auto dropped = ram_->drop(first + done + i)) release(*dropped);
      }
      done += n;
    }
    (durability == Durability::forced ? stats_.forced_write_pages : stats_.bypass_write_pages) += count;
  }
  FLASHDIR_TRY(settle());
  ++stats_.write_requests;
  stats_.write_pages += count;
  finish_request(started);
  return version;
}

Status FtlCore::make_durable(Lpn first, std::uint32_t count) {
  FLASHDIR_TRY(check_alive());
  FLASHDIR_TRY(check_range("make durable", first, count));
  const std::uint64_t started = clock_.now_ns();
  // The buffered pages stay in RAM (and keep their holds) until they are programmed, so a
  // failure part-way loses nothing that was acknowledged. They are programmed from the RAM's own
  // buffers, not copies: nothing in programming drops or evicts a buffered page (eviction waits
  // for settle(), below), and a page's bytes stay where they are while its entry moves.
  std::vector<HostPage>& host = host_pages_;
  host.clear();
  for (std::uint32_t i = 0; i < count; ++i) {
    if (const ram::BufferedPage* page = ram_->find(first + i)) host.push_back({page->lpn, page->version, page->data, page->hint});
  }
  if (!host.empty()) {
    FLASHDIR_TRY(program_host_pages(host));
    for (const HostPage& page : host) {
      if (auto dropped = ram_->drop(page.lpn)) release(*dropped);
      ++ram_page_ops_;  // out of RAM
    }
    stats_.forced_program_pages += host.size();
  }
  FLASHDIR_TRY(settle());
  finish_request(started);
  return Status::ok();
}

Status FtlCore::trim(Lpn first, std::uint32_t count) {
  FLASHDIR_TRY(check_alive());
  FLASHDIR_TRY(check_range("trim", first, count));
  const std::uint64_t started = clock_.now_ns();
  ram_->note_access(first, count, Access::write);
  std::optional<std::uint64_t> room_made_for;
  for (std::uint32_t i = 0; i < count; ++i) {
    // A translation page the trim dirties takes a page of flash when the mapping cache writes
    // it back: GC makes room first, as it does for a write's data (ensure_free_blocks counts
    // dirty translation pages as spent). Without it, a long run of trims (a cache dropping its
    // clean slots at restart) used up the free blocks and stopped the device.
    if (const std::uint64_t tpn = layout_.tpn_of(first + i); tpn != room_made_for) {
      FLASHDIR_TRY(ensure_free_blocks(0));
      room_made_for = tpn;
    }
    // The buffered writes never reached flash; until the trim does, flash shows what preceded
    // them, so they stay pending (not durable) until the next flush.
    if (auto dropped = ram_->drop(first + i)) trimmed_pending_.push_back(*dropped);
    auto ppn = ram_->lookup(first + i, Access::write);
    if (!ppn.is_ok()) return fail(ppn.status());
    if (*ppn == kUnmappedPpn) continue;
    if (is_physical(*ppn)) {
      invalidate(Ppn(*ppn));
      blocks_with_unpersisted_trims_.insert(layout_.geometry.block_of(Ppn(*ppn)).value);
    } else {
      lost_lpns_.erase(first.value + i);  // until the trim is persisted, a power cut brings the loss back
    }
    ram_->set(first + i, kUnmappedPpn);
    unpersisted_trim_tpns_.insert(layout_.tpn_of(first + i));
  }
  FLASHDIR_TRY(settle());
  ++stats_.trim_requests;
  stats_.trim_pages += count;
  finish_request(started);
  return Status::ok();
}

Status FtlCore::flush() {
  FLASHDIR_TRY(check_alive());
  // The write buffer and the dirty translation pages go to flash (trims with them).
  FLASHDIR_TRY(program_buffered(ram_->drain()));
  FLASHDIR_TRY(write_back_mapping());
  for (std::uint64_t pending : trimmed_pending_) release(pending);
  trimmed_pending_.clear();
  durable_sequence_ = watermark();
  if (Status s = chip_.sync(); !s.is_ok()) return fail(s);
  if (programs_since_checkpoint_ >= checkpoint_interval_pages_) FLASHDIR_TRY(write_checkpoint());
  return Status::ok();
}

}  // namespace flashdir::ftl
