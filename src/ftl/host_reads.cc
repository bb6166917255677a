// Host reads, in three steps so that the chip I/O can run outside the owner's lock
// (include/flashdir/ftl/prepared_read.h; doc/ftl.md, "Concurrent reads"):
//  - prepare_read: the device RAM and the mapping (lookups change the mapping cache), under the
//    owner's serialisation; each page's block erase count is noted;
//  - read_prepared: the chip pages read and verified, const, from any thread (where the chip
//    allows it);
//  - finish_read: serialised again; a run whose blocks were not erased meanwhile holds what it
//    held when prepared (a page is immutable from program to erase), so a verified one is only
//    charged; any other is read again the plain way (retries, corruption errors).
// read() is prepare_read + finish_read: the chip reads all happen in finish_read, exactly as
// a single call did, so the statistics of a read do not depend on the way it is done.
#include <fmt/format.h>

#include "flashdir/format.h"
#include "ftl_core.h"
#include "mapcache/entry_cache.h"

namespace flashdir::ftl {
namespace {

Status lost_error(Lpn lpn) {
  return Status::corruption(fmt::format("LPN {} is lost: its page failed verification or vanished from the chip "
                                        "(it reads as an error until written or trimmed)",
                                        lpn.value));
}

}  // namespace

Status FtlCore::read(Lpn first, std::uint32_t count, ByteSpan data) {
  FLASHDIR_TRY(prepare_read(first, count, data, plain_read_));
  plain_read_.concurrent_ = false;  // finish_read does the chip reads
  return finish_read(plain_read_, data);
}

Status FtlCore::prepare_read(Lpn first, std::uint32_t count, ByteSpan data, PreparedRead& read) {
  FLASHDIR_TRY(check_alive());
  FLASHDIR_TRY(check_range("read", first, count));
  const Geometry& g = layout_.geometry;
  const std::size_t page_bytes = g.page_size_bytes;
  if (!(data.size() == count * page_bytes || (data.empty() && !chip_.stores_data()))) {
    return Status::invalid_argument(fmt::format("read of {} pages needs a buffer of {} bytes, got {}", count,
                                                count * page_bytes, data.size()));
  }
  const std::uint64_t started = clock_.now_ns();
  const std::uint64_t ram_ops_before = ram_page_ops_;
  ram_->note_access(first, count, Access::read);
  read.runs_.clear();
  auto lost_at = resolve_read(first, count, data, read.runs_);
  ram_->register_laid_out_blocks();  // what the lookups just brought into RAM included
  if (!lost_at.is_ok()) return lost_at.status();
  read.erase_counts_.assign(count, 0);
  for (const PreparedRead::Run& run : read.runs_)
    for (std::uint32_t k = 0; k < run.pages; ++k)
      read.erase_counts_[run.index + k] = chip_.erase_count(g.block_of(Ppn(run.ppn + k)));
  read.first_ = first;
  read.count_ = count;
  read.lost_at_ = *lost_at;
  // The RAM work and the time so far belong to this request: finish_read charges them, after
  // whatever other requests ran in between.
  read.ram_page_ops_ = ram_page_ops_ - ram_ops_before;
  ram_page_ops_ = ram_ops_before;
  read.prepare_ns_ = clock_.now_ns() - started;
  read.concurrent_ = chip_.concurrent_reads() && !data.empty();
  read.redone_runs_ = 0;
  read.pending_ = true;
  return Status::ok();
}

Result<std::uint32_t> FtlCore::resolve_read(Lpn first, std::uint32_t count, ByteSpan data,
                                            std::vector<PreparedRead::Run>& runs) {
  const std::size_t page_bytes = layout_.geometry.page_size_bytes;
  // Buffered pages are the newest: RAM first, flash for the rest.
  std::vector<std::uint32_t>& ppns = read_ppns_;
  ppns.assign(count, kUnmappedPpn);
  std::vector<bool>& buffered = read_buffered_;
  buffered.assign(count, false);
  for (std::uint32_t i = 0; i < count; ++i) {
    if (const ram::BufferedPage* page = ram_->find(first + i)) {
      buffered[i] = true;
      ++ram_page_ops_;
      if (!data.empty()) {
        const ByteSpan out = data.subspan(i * page_bytes, page_bytes);
        if (page->data.empty()) std::fill(out.begin(), out.end(), 0);
        else std::copy(page->data.begin(), page->data.end(), out.begin());
      }
      continue;
    }
    auto ppn = ram_->lookup(first + i, Access::read);
    if (!ppn.is_ok()) return fail(ppn.status());
    ppns[i] = *ppn;
  }
  for (std::uint32_t i = 0; i < count;) {
    if (buffered[i]) {
      ++i;
      continue;
    }
    if (ppns[i] == kUnmappedPpn) {
      if (!data.empty()) std::fill_n(data.begin() + static_cast<std::ptrdiff_t>(i * page_bytes), page_bytes, 0);
      ++i;
      continue;
    }
    if (ppns[i] == kLostPpn) return i;
    // One chip read per run of physically consecutive pages.
    std::uint32_t n = 1;
    while (i + n < count && !buffered[i + n] && ppns[i + n] == ppns[i] + n) ++n;
    runs.push_back({i, n, ppns[i], false});
    i += n;
  }
  return count;
}

std::string FtlCore::verify_run(Lpn first, std::uint32_t count, std::uint32_t ppn, ConstByteSpan data,
                                ConstByteSpan oob) const {
  const Geometry& g = layout_.geometry;
  const std::size_t page_bytes = g.page_size_bytes;
  for (std::uint32_t k = 0; k < count; ++k) {
    std::string problem;
    auto record = format::decode_oob(oob.subspan(std::size_t{k} * g.oob_size_bytes, g.oob_size_bytes));
    if (!record.is_ok()) {
      problem = record.status().message();
    } else if (record->kind != format::PageKind::data || record->logical_number != first.value + k) {
      problem = fmt::format("the page holds {} {}", format::page_kind_name(record->kind), record->logical_number);
    } else if (chip_.stores_data() && format::xxh3(data.subspan(k * page_bytes, page_bytes)) != record->data_hash) {
      problem = "data does not match its hash";
    }
    if (!problem.empty()) return fmt::format("LPN {} at page {}: {}", first.value + k, ppn + k, problem);
  }
  return {};
}

Status FtlCore::read_run(Lpn first, std::uint32_t count, std::uint32_t ppn, ByteSpan data) {
  const Geometry& g = layout_.geometry;
  std::vector<std::uint8_t>& oob = read_oobs_;
  oob.resize(std::size_t{count} * g.oob_size_bytes);
  for (int attempt = 1;; ++attempt) {
    if (Status s = chip_.read(Ppn(ppn), count, data, oob); !s.is_ok()) return fail(s);
    const std::string problem = verify_run(first, count, ppn, data, oob);
    if (problem.empty()) return Status::ok();
    if (attempt == kReadAttempts) return Status::corruption(problem);
  }
}

void FtlCore::read_prepared(PreparedRead& read, ByteSpan data) const {
  if (!read.pending_ || !read.concurrent_) return;
  const Geometry& g = layout_.geometry;
  read.oob_.resize(std::size_t{read.count_} * g.oob_size_bytes);
  for (PreparedRead::Run& run : read.runs_) {
    const ByteSpan run_data = data.subspan(std::size_t{run.index} * g.page_size_bytes, std::size_t{run.pages} * g.page_size_bytes);
    const ByteSpan run_oob =
        ByteSpan(read.oob_).subspan(std::size_t{run.index} * g.oob_size_bytes, std::size_t{run.pages} * g.oob_size_bytes);
    // A failure here is no verdict (the block may have been erased meanwhile): finish_read
    // reads the run again.
    run.verified = chip_.read_concurrently(Ppn(run.ppn), run.pages, run_data, run_oob).is_ok() &&
                   verify_run(read.first_ + run.index, run.pages, run.ppn, run_data, run_oob).empty();
  }
}

bool FtlCore::blocks_unchanged(const PreparedRead& read, const PreparedRead::Run& run) const {
  const Geometry& g = layout_.geometry;
  for (std::uint32_t k = 0; k < run.pages; ++k)
    if (chip_.erase_count(g.block_of(Ppn(run.ppn + k))) != read.erase_counts_[run.index + k]) return false;
  return true;
}

Status FtlCore::reread(Lpn first, std::uint32_t count, ByteSpan data) {
  const std::size_t page_bytes = layout_.geometry.page_size_bytes;
  std::vector<PreparedRead::Run> runs;
  auto lost_at = resolve_read(first, count, data, runs);
  if (!lost_at.is_ok()) return lost_at.status();
  for (const PreparedRead::Run& run : runs) {
    const ByteSpan run_data = data.empty() ? data : data.subspan(std::size_t{run.index} * page_bytes, std::size_t{run.pages} * page_bytes);
    FLASHDIR_TRY(read_run(first + run.index, run.pages, run.ppn, run_data));
  }
  if (*lost_at < count) return lost_error(first + *lost_at);
  return Status::ok();
}

Status FtlCore::finish_read(PreparedRead& read, ByteSpan data) {
  if (!read.pending_) return Status::invalid_argument("finish_read of a read that was not prepared (or finished already)");
  read.pending_ = false;
  FLASHDIR_TRY(check_alive());
  const Geometry& g = layout_.geometry;
  const std::size_t page_bytes = g.page_size_bytes;
  const std::uint64_t started = clock_.now_ns() - read.prepare_ns_;
  ram_page_ops_ += read.ram_page_ops_;
  for (const PreparedRead::Run& run : read.runs_) {
    const Lpn first = read.first_ + run.index;
    const ByteSpan run_data =
        data.empty() ? data : data.subspan(std::size_t{run.index} * page_bytes, std::size_t{run.pages} * page_bytes);
    if (!blocks_unchanged(read, run)) {
      // GC moved the pages since the preparation: where they are now.
      ++read.redone_runs_;
      FLASHDIR_TRY(reread(first, run.pages, run_data));
    } else if (run.verified) {
      if (Status s = chip_.charge_reads(run.pages); !s.is_ok()) return fail(s);
    } else {
      if (read.concurrent_) ++read.redone_runs_;
      FLASHDIR_TRY(read_run(first, run.pages, run.ppn, run_data));
    }
  }
  if (read.lost_at_ < read.count_) return lost_error(read.first_ + read.lost_at_);
  ++stats_.read_requests;
  stats_.read_pages += read.count_;

  // Eager CFTL also converts read-hot, write-cold logical blocks in the background, at most
  // one per pages_per_block host requests so the work stays a small fraction of the load. The
  // block it fills is made free by GC, as for a host write, never taken from the reserve.
  if (options_.mapping == format::MappingScheme::cftl && options_.cftl.consolidation == ConsolidationMode::eager &&
      ++requests_since_consolidation_ >= g.pages_per_block) {
    if (auto lbn = ram_->consolidation_candidate()) {
      requests_since_consolidation_ = 0;
      // Optional work: a device too full to make the room skips it, and the read stands.
      const Status room = ensure_free_blocks(1);
      if (!room.is_ok() && room.code() != StatusCode::no_space) return room;
      if (room.is_ok() && ram_->wants_block_mapping(*lbn)) FLASHDIR_TRY(consolidate(*lbn));  // GC may have done it
    }
  }
  FLASHDIR_TRY(settle());
  finish_request(started);
  return Status::ok();
}

}  // namespace flashdir::ftl
