// Reads (doc/cache.md "Reads"): hits served from the FTL, their chip reads outside the cache
// lock; misses read from the backing file and admitted.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "cache/engine_core.h"

namespace flashdir::cache {

// admit_missed() of a read's last miss, run after its reply (DeferredFill): it keeps the file,
// its read lock and the read's buffer, which goes back to the reading thread afterwards.
class EngineCore::MissFill final : public DeferredFill::Work {
 public:
  MissFill(EngineCore& core, std::shared_ptr<FileState> file, std::shared_lock<std::shared_mutex> lock,
           std::uint64_t first_page, std::uint32_t count, std::vector<std::uint8_t>& buffer)
      : core_(core), file_(std::move(file)), lock_(std::move(lock)), first_page_(first_page), count_(count),
        home_(buffer) {
    bytes_.swap(buffer);
  }
  void run() override {
    // A failure has stopped the engine (fail()), which every later call reports.
    [[maybe_unused]] const Status admitted = core_.admit_missed(file_->file_id, first_page_, count_, bytes_);
    lock_.unlock();
    if (home_.empty()) home_.swap(bytes_);
  }

 private:
  EngineCore& core_;
  std::shared_ptr<FileState> file_;
  std::shared_lock<std::shared_mutex> lock_;
  std::uint64_t first_page_;
  std::uint32_t count_;
  std::vector<std::uint8_t> bytes_;
  std::vector<std::uint8_t>& home_;
};

Result<std::size_t> EngineCore::read(FileHandle handle, std::uint64_t offset, ByteSpan out, DeferredFill* later) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  OpenHandle& opened = **open;
  FileState& file = *opened.file;
  BackingFile& backing = *opened.backing;
  std::shared_lock file_lock(file.lock);
  FLASHDIR_TRY(store_written_behind(file));
  ++counters_.read_requests;
  const std::uint64_t size = file.size_bytes.load();
  if (offset >= size || out.empty()) return std::size_t{0};
  const std::uint64_t end = std::min<std::uint64_t>(size, offset + out.size());
  const bool admit = !file.bypassed && (options_.read_sequential_cutoff_bytes == 0 ||
                                        file.read_stream.note(offset, end - offset) <= options_.read_sequential_cutoff_bytes);
  // Read-ahead only for a sequential reader (from the start of the file, or on from where this
  // open's last read ended), as the kernel does: after a random read it would fill the cache
  // with pages nobody asked for, each an eviction and a chip program (8 of 9 pages filled).
  const bool continues = opened.reads.note(offset, end - offset) > end - offset;
  const bool sequential = offset == 0 || continues;
  const std::uint32_t read_ahead_pages = sequential ? options_.read_ahead_pages : 0;
  const std::uint64_t first_page = offset / page_size_;
  const std::uint64_t last_page = (end - 1) / page_size_;
  const std::uint64_t eof_page = (size - 1) / page_size_;
  thread_local std::vector<std::uint8_t> pages;
  std::uint32_t deferred = 0;  // pages of the last miss, from `page` on, left to `later`
  // A sequential reader whose last request missed (its pages still being admitted, under the
  // cache lock) likely misses again: its backing read goes first, while that admission runs,
  // and stands for the pages still missing once the cache is looked at (the file lock keeps
  // writes out in between).
  const std::size_t buffer_bytes = std::size_t{options_.miss_read_pages + options_.read_ahead_pages} * page_size_;
  const std::uint64_t fill_end = opened.deferred_fill_end.exchange(0);
  const std::uint64_t speculated_page =
      later != nullptr && continues && fill_end >= first_page && fill_end <= last_page ? fill_end : UINT64_MAX;
  // A miss at `page` reads on to the end of the request (up to miss_read_pages: one backing
  // read, which a store that overlaps its round trips serves in one), and past it by the
  // read-ahead, up to the end of the file.
  auto requested_from = [&](std::uint64_t page) {
    return std::min<std::uint64_t>(last_page - page + 1, options_.miss_read_pages);
  };
  auto reach_from = [&](std::uint64_t page) {
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(eof_page - page + 1, requested_from(page) + read_ahead_pages));
  };
  // `count` pages from `page` on, from the backing file into `buffer` (zeros past its end).
  auto read_backing = [&](std::uint64_t page, std::uint32_t count, std::vector<std::uint8_t>& buffer) {
    const std::size_t bytes = std::size_t{count} * page_size_;
    std::fill_n(buffer.begin(), bytes, std::uint8_t{0});
    auto got = backing.read(page * page_size_, ByteSpan(buffer.data(), bytes));
    if (!got.is_ok()) ++counters_.backing_errors;
    return got.status();
  };
  thread_local std::vector<std::uint8_t> ahead;  // the speculated read's bytes
  std::uint32_t speculated = 0;
  if (speculated_page != UINT64_MAX) {
    speculated = reach_from(speculated_page);
    ahead.resize(buffer_bytes);
    FLASHDIR_TRY(read_backing(speculated_page, speculated, ahead));
  }

  for (std::uint64_t page = first_page; page <= last_page;) {
    const auto wanted = static_cast<std::uint32_t>(std::min<std::uint64_t>(last_page - page + 1, kMaxRunPages));
    pages.resize(buffer_bytes);
    const std::uint64_t run_start = page * page_size_;
    const std::uint64_t requested = requested_from(page);
    const std::uint32_t reach = reach_from(page);
    // Whole pages the caller's buffer takes from `page` on: a hit reads them straight into it.
    const std::uint64_t direct_pages = run_start < offset ? 0 : (offset + out.size() - run_start) / page_size_;
    const bool direct = direct_pages > 0;
    std::uint32_t served = 0;
    std::uint32_t missing = 0;
    std::uint32_t missing_requested = 0;  // of `missing`, the pages the request asked for
    bool read_already = false;            // the speculated read holds the missing pages
    {
      std::unique_lock cache(cache_mutex_);
      FLASHDIR_TRY(check_alive());
      if (page == speculated_page && !slots_->find(file.file_id, page)) {
        missing = missing_run(file.file_id, page, speculated);
        read_already = true;
        pages.swap(ahead);
      } else {
        auto hit = direct ? read_hit(cache, file.file_id, page,
                                     static_cast<std::uint32_t>(std::min<std::uint64_t>(wanted, direct_pages)),
                                     out.subspan(run_start - offset))
                          : read_hit(cache, file.file_id, page, wanted, pages);
        if (!hit.is_ok()) return hit.status();
        served = *hit;
        if (served == 0) missing = missing_run(file.file_id, page, reach);
      }
      missing_requested = static_cast<std::uint32_t>(std::min<std::uint64_t>(missing, requested));
    }
    if (served > 0) {
      counters_.read_hit_pages += served;
      if (direct) {
        page += served;
        continue;
      }
    } else {
      if (!read_already) FLASHDIR_TRY(read_backing(page, missing, pages));
      served = missing_requested;
      counters_.read_miss_pages += served;
      counters_.read_ahead_pages += missing - served;
      if (!admit) {
        counters_.cutoff_bypassed_pages += missing;
      } else if (later != nullptr && page + served > last_page) {
        deferred = missing;  // the request ends here: the caller admits them after its reply
      } else {
        const ConstByteSpan bytes = ConstByteSpan(pages).first(std::size_t{missing} * page_size_);
        FLASHDIR_TRY(admit_missed(file.file_id, page, missing, bytes));
      }
    }
    // Copy the part of the served pages the caller asked for.
    const std::uint64_t from = std::max(offset, run_start);
    const std::uint64_t to = std::min(end, run_start + std::uint64_t{served} * page_size_);
    std::memcpy(out.data() + (from - offset), pages.data() + (from - run_start), to - from);
    if (deferred != 0) {
      // Only a miss that ran its full reach (no cached page cut it short) says that the pages
      // after it are likely missing too.
      opened.deferred_fill_end = deferred == reach ? page + deferred : 0;
      auto fill = std::make_unique<MissFill>(*this, opened.file, std::move(file_lock), page, deferred, pages);
      *later = DeferredFill(std::move(fill));
      break;
    }
    page += served;
  }
  return static_cast<std::size_t>(end - offset);
}

Status EngineCore::admit_missed(std::uint64_t file_id, std::uint64_t first_page, std::uint32_t count,
                                ConstByteSpan bytes) {
  std::uint32_t first_admitted = 0;
  while (first_admitted < count && !promoted(file_id, first_page + first_admitted)) ++first_admitted;
  if (first_admitted == count) return Status::ok();
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  auto stored = store_pages(file_id, first_page + first_admitted, count - first_admitted,
                            bytes.subspan(std::size_t{first_admitted} * page_size_), true);
  return stored.status();
}

EngineCore::CachedRun EngineCore::cached_run(std::uint64_t file_id, std::uint64_t page, std::uint32_t max_pages) const {
  const std::optional<SlotIndex> first = slots_->find(file_id, page);
  if (!first || max_pages == 0) return {};
  const SlotIndex slot = *first;
  std::uint32_t run = 1;
  while (run < max_pages && slot + run < slots_->capacity() && slots_->find(file_id, page + run) == slot + run) ++run;
  return {slot, run};
}

Result<std::uint32_t> EngineCore::read_cached_run(std::uint64_t file_id, std::uint64_t page, std::uint32_t max_pages,
                                                  ByteSpan out) {
  const CachedRun run = cached_run(file_id, page, max_pages);
  if (run.pages == 0) return std::uint32_t{0};
  Status read = ftl_.read(layout_.data_lpn(run.slot), run.pages, out.first(std::size_t{run.pages} * page_size_));
  return serve_run(file_id, page, run, read, out);
}

Result<std::uint32_t> EngineCore::read_hit(std::unique_lock<std::mutex>& cache, std::uint64_t file_id,
                                           std::uint64_t page, std::uint32_t max_pages, ByteSpan out) {
  const CachedRun run = cached_run(file_id, page, max_pages);
  if (run.pages == 0) return std::uint32_t{0};
  const ByteSpan bytes = out.first(std::size_t{run.pages} * page_size_);
  thread_local PreparedRead prepared;
  if (Status s = ftl_.prepare_read(layout_.data_lpn(run.slot), run.pages, bytes, prepared); !s.is_ok()) return fail(s);
  UnlockedRead unlocked{&prepared, bytes, Status::ok()};
  FLASHDIR_TRY(read_outside_lock(cache, {&unlocked, 1}));
  const Status read = unlocked.result;
  // The file lock (shared) keeps writes to these pages out, so a slot that still holds its
  // page holds the same bytes.
  if (cached_run(file_id, page, run.pages) != run) {
    // Evicted or dropped while the lock was free: `bytes` may be another page's. The locked
    // path serves what is cached now.
    if (!read.is_ok() && read.code() != StatusCode::corruption) return fail(read);
    return read_cached_run(file_id, page, max_pages, out);
  }
  return serve_run(file_id, page, run, read, out);
}

Result<std::uint32_t> EngineCore::serve_run(std::uint64_t file_id, std::uint64_t page, CachedRun run, Status read,
                                            ByteSpan out) {
  const SlotIndex slot = run.slot;
  if (read.code() == StatusCode::corruption) {
    // Page by page, to keep what is good; a page that fails is dropped and read from the backing
    // file by the caller. Its bytes are never served.
    for (std::uint32_t i = 0; i < run.pages; ++i) {
      Status one = ftl_.read(layout_.data_lpn(slot + i), 1, out.subspan(std::size_t{i} * page_size_, page_size_));
      if (one.code() == StatusCode::corruption) {
        ++counters_.corrupt_pages;
        const bool dirty = slots_->dirty(slot + i);
        FLASHDIR_TRY(drop_slots({slot + i}));
        if (dirty) {
          // A dirty page has no other copy: the read fails rather than serve older bytes, and
          // the file's next fsync or close says so too (once), as Linux reports a lost write-back.
          Status lost = damaged_dirty_page(file_id, page + i);
          if (auto it = dirty_files_.find(file_id); it != dirty_files_.end() && it->second->lost_while_open.is_ok())
            it->second->lost_while_open = lost;
          return lost;
        }
        run.pages = i;
        break;
      }
      if (!one.is_ok()) return fail(one);
    }
  } else if (!read.is_ok()) {
    return fail(read);
  }
  for (std::uint32_t i = 0; i < run.pages; ++i) slots_->reference(slot + i);
  return run.pages;
}

Status EngineCore::read_outside_lock(std::unique_lock<std::mutex>& cache, std::span<UnlockedRead> reads) {
  const bool concurrent =
      std::any_of(reads.begin(), reads.end(), [](const UnlockedRead& read) { return read.prepared->concurrent(); });
  if (concurrent) {
    cache.unlock();
    for (UnlockedRead& read : reads) ftl_.read_prepared(*read.prepared, read.bytes);
    cache.lock();
  }
  for (UnlockedRead& read : reads) read.result = ftl_.finish_read(*read.prepared, read.bytes);
  return check_alive();
}

Status EngineCore::damaged_dirty_page(std::uint64_t file_id, std::uint64_t page_no) {
  return Status::corruption(
      fmt::format("page {} of file {} was only in the cache (write-back) and is damaged", page_no, file_id));
}

std::uint32_t EngineCore::missing_run(std::uint64_t file_id, std::uint64_t page, std::uint32_t max_pages) const {
  std::uint32_t run = 0;
  while (run < max_pages && !slots_->find(file_id, page + run)) ++run;
  return run;
}

}  // namespace flashdir::cache
