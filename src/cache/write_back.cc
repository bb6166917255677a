// Write-back (doc/cache.md "Write-back"): writes land in the cache as dirty pages; a flusher
// thread writes them back between the high and low watermarks; fsync makes them durable in the
// cache; the last release, truncate, fallocate and close write a file's dirty pages back.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <utility>

#include "cache/engine_core.h"

namespace flashdir::cache {
namespace {

// Runs of consecutive slots a flusher's batch takes at most. Marking a batch clean rewrites the
// metadata of every slot in it, while writers go on filling the device: batches of a quarter
// of a 16 MiB cache, of slots scattered by random writes, left its FTL unable to free the
// blocks it reserves for dirty translation pages (garbage collection cannot free 6 blocks,
// 5 free: the cache stopped with ENOSPC); 64 scattered pages, the batch of before, never did.
// A sequential stream's slots run on, and its batches stay large.
constexpr std::size_t kMaxScatteredSlotRuns = 64;

// A flusher's piece (below) is sized to take about this long at the store's pace: doubled after
// one that took less than half, halved after one that took more than twice.
constexpr std::chrono::milliseconds kPieceTime{10};

// How a batch goes to the backing file. With `give_way_to` set (a flusher's batch) it goes in
// pieces of `*piece_pages` pages, and no further once a thread waits for it: the waiter waits
// for the piece in flight. Each piece resizes the next one (kPieceTime), between
// `min_piece_pages` and `max_piece_pages`, so that a store fast for its calls still takes few
// of them: each write may cost a round trip of its own (a FUSE store's kernel asks for the
// file's security.capability at every write). Without it each run goes whole.
struct BatchWrites {
  const GivingWayMutex* give_way_to = nullptr;
  std::size_t* piece_pages = nullptr;
  std::size_t min_piece_pages = 1;
  std::size_t max_piece_pages = 1;
};

void resize_piece(BatchWrites& how, std::chrono::steady_clock::duration took) {
  std::size_t& pages = *how.piece_pages;
  if (took < kPieceTime / 2) pages = std::min(pages * 2, how.max_piece_pages);
  if (took > kPieceTime * 2) pages = std::max(pages / 2, how.min_piece_pages);
}

// Writes the batch's pages to `target`, cut at `size_bytes`, each run of consecutive file pages
// whose bytes lie one after another with as few writes as `how` allows. Returns how many of the
// batch's pages (in order) the backing holds now: all of them; those before the first page it
// refuses with EFBIG (`refused` says why; no later attempt can write it, nor any page after
// it); or, once `how.give_way_to` has a waiter, those written before it came (at least one
// write's). Any other error is returned. `errors` counts the backing's failed writes.
Result<std::size_t> write_page_runs(BackingFile& target, const WriteBackBatch& batch, ConstByteSpan bytes,
                                    std::uint64_t size_bytes, std::uint32_t page_size, BatchWrites how,
                                    std::atomic<std::uint64_t>& errors, Status& refused) {
  const std::size_t count = batch.keys.size();
  const auto write_pages = [&](std::size_t first, std::size_t end) -> Status {
    const std::uint64_t start = batch.keys[first].page_no * page_size;
    if (start >= size_bytes) return Status::ok();  // past the end (a truncate's leftovers never get here)
    const std::uint64_t length = std::min<std::uint64_t>((end - first) * std::uint64_t{page_size}, size_bytes - start);
    Status s = target.write(start, bytes.subspan(batch.buffer_page[first] * page_size, length));
    if (!s.is_ok()) ++errors;
    return s;
  };
  const bool in_pieces = how.give_way_to != nullptr;
  for (std::size_t first = 0; first < count;) {
    if (first > 0 && in_pieces && how.give_way_to->waited_for()) return first;
    const std::size_t piece_pages = in_pieces ? *how.piece_pages : SIZE_MAX;
    std::size_t end = first + 1;
    while (end < count && end - first < piece_pages && batch.keys[end].page_no == batch.keys[end - 1].page_no + 1 &&
           batch.buffer_page[end] == batch.buffer_page[end - 1] + 1)
      ++end;
    const auto started = std::chrono::steady_clock::now();
    Status s = write_pages(first, end);
    // A run's short tail, or a failed write, says nothing of the store's pace.
    if (in_pieces && end - first == piece_pages && s.is_ok())
      resize_piece(how, std::chrono::steady_clock::now() - started);
    if (!s.is_ok()) {
      if (s.sys_errno() != EFBIG) return s;
      // Which page the backing refuses: the run again, page by page.
      for (std::size_t page = first; page < end; ++page) {
        Status one = write_pages(page, page + 1);
        if (one.is_ok()) continue;
        if (one.sys_errno() != EFBIG) return one;
        refused = one;
        return page;
      }
    }
    first = end;
  }
  return count;
}

}  // namespace

std::size_t EngineCore::within_scattered_slot_limit(const std::vector<SlotIndex>& slots) const {
  std::size_t runs = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const bool runs_on = i > 0 && slots[i] == slots[i - 1] + 1 &&
                         slots_->key(slots[i]).page_no == slots_->key(slots[i - 1]).page_no + 1;
    if (!runs_on && ++runs > kMaxScatteredSlotRuns) return i;
  }
  return slots.size();
}

Result<std::size_t> EngineCore::write_into_cache(OpenHandle& open, std::uint64_t offset, ConstByteSpan data) {
  const std::shared_ptr<FileState>& state = open.file;
  const std::shared_ptr<BackingFile>& backing = open.backing;
  FileState& file = *state;
  // The target stays the first writer's: made each write's own, every writer of a file written
  // by several would wait at each turn for the flusher's batch in flight (backing_mutex).
  if (file.write_target_file.load(std::memory_order_acquire) == nullptr) {
    std::lock_guard backing_lock(file.backing_mutex);
    if (file.write_target == nullptr) file.set_write_target(backing);
  }
  const std::uint64_t stream_bytes = open.writes.note(offset, data.size());
  const std::uint64_t end = offset + data.size();
  // The size grows before any page is dirty: the flusher cuts what it writes back at it.
  file.size_bytes = std::max(file.size_bytes.load(), end);
  const std::uint64_t last_page = (end - 1) / page_size_;
  thread_local std::vector<std::uint8_t> pages;
  for (std::uint64_t first = offset / page_size_; first <= last_page;) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(last_page - first + 1, kMaxStoreRunPages));
    const std::uint64_t run_start = first * page_size_;
    const std::uint64_t run_end = run_start + std::uint64_t{count} * page_size_;
    // A run the write covers whole goes to the cache from the caller's bytes, copied once.
    const bool whole_run = offset <= run_start && end >= run_end;
    if (!whole_run) pages.resize(std::size_t{count} * page_size_);  // each page written whole, or read first
    // A page the write covers in part keeps the rest of its current contents: from the cache,
    // or from the backing file, which holds the newest bytes of every page the cache does not
    // (zeros past its end).
    for (std::uint32_t i = 0; i < count && !whole_run; ++i) {
      const std::uint64_t page_start = (first + i) * page_size_;
      if (offset <= page_start && end >= page_start + page_size_) continue;
      const ByteSpan page = ByteSpan(pages).subspan(std::size_t{i} * page_size_, page_size_);
      std::fill(page.begin(), page.end(), std::uint8_t{0});
      {
        std::lock_guard cache(cache_mutex_);
        FLASHDIR_TRY(check_alive());
        auto cached = read_cached_run(file.file_id, first + i, 1, page);
        if (!cached.is_ok()) return cached.status();
        if (*cached == 1) continue;
      }
      auto got = backing->read(page_start, page);
      if (!got.is_ok()) {
        ++counters_.backing_errors;
        return got.status();
      }
    }
    const ConstByteSpan run_bytes =
        whole_run ? data.subspan(run_start - offset, run_end - run_start) : ConstByteSpan(pages);
    if (!whole_run) {
      const std::uint64_t from = std::max(offset, run_start);
      const std::uint64_t to = std::min(end, run_end);
      std::memcpy(pages.data() + (from - run_start), data.data() + (from - offset), to - from);
    }

    std::unique_lock cache(cache_mutex_);
    for (std::uint32_t stored = 0; stored < count;) {
      FLASHDIR_TRY(check_alive());
      auto now = store_pages(file.file_id, first + stored, count - stored,
                             run_bytes.subspan(std::size_t{stored} * page_size_), true, true);
      if (!now.is_ok()) return now.status();
      stored += *now;
      dirty_files_[file.file_id] = state;
      if (stored == count || *now > 0) continue;
      // Every slot is dirty: wait for the flusher rather than lose data or overfill the cache.
      ++counters_.writer_waits;
      ++writers_waiting_;
      flush_wanted_.notify_one();
      slot_cleaned_.wait(cache, [&] {
        return slots_->dirty_count() < slots_->capacity() || !failed_.is_ok() || stopping_ || !flush_error_.is_ok();
      });
      --writers_waiting_;
      if (stopping_) return Status::invalid_argument("the cache engine is closing");
      if (slots_->dirty_count() == slots_->capacity() && !flush_error_.is_ok()) return flush_error_;
    }
    if (slots_->dirty_count() * 100ULL > std::uint64_t{slots_->capacity()} * options_.dirty_high_watermark_percent)
      flush_wanted_.notify_one();
    first += count;
  }
  // A sequential stream goes back behind its writer (options_.write_back_stream_bytes): the close
  // of a streamed file used to write all of it back after the writer had finished.
  if (options_.write_back_stream_bytes != 0 && stream_bytes >= options_.write_back_stream_bytes) {
    std::lock_guard cache(cache_mutex_);
    if (slots_->dirty_count_of(file.file_id) >= stream_batch_pages()) {
      streaming_files_.insert(file.file_id);
      flush_wanted_.notify_one();
    }
  }
  return data.size();
}

std::size_t EngineCore::stream_batch_pages() const {
  return std::max<std::size_t>(1, options_.write_back_stream_bytes / page_size_);
}

std::size_t EngineCore::pressure_batch_pages() const {
  // A quarter: the writers keep the rest of the cache to fill while a batch goes back.
  return std::max<std::size_t>(1, std::min<std::size_t>(options_.flush_batch_pages, slots_->capacity() / 4));
}

ByteSpan WriteBackBuffer::grown_to(std::size_t want_pages, std::uint32_t page_size) {
  if (want_pages > pages) {
    pages = want_pages;
    bytes = std::make_unique_for_overwrite<std::uint8_t[]>(pages * page_size);
  }
  return ByteSpan(bytes.get(), want_pages * page_size);
}

Status EngineCore::write_back(std::uint64_t file_id, BackingFile& target, const std::atomic<std::uint64_t>& file_size,
                              std::size_t max_pages, const GivingWayMutex* give_way_to, LostPages& lost) {
  if (max_pages == 0 && give_way_to == nullptr) return drain_write_back(file_id, target, file_size, lost);
  const std::size_t drain_batch = std::max<std::size_t>(1, options_.write_back_drain_batch_bytes / page_size_);
  const std::size_t batch = max_pages != 0 ? max_pages : drain_batch;
  BatchWrites how;
  if (give_way_to != nullptr) {
    const std::size_t fewest = std::max<std::size_t>(1, options_.write_back_piece_bytes / page_size_);
    const std::size_t most = std::max(fewest, drain_batch);
    flusher_piece_pages_ = std::clamp(flusher_piece_pages_, fewest, most);
    how = {.give_way_to = give_way_to, .piece_pages = &flusher_piece_pages_, .min_piece_pages = fewest,
           .max_piece_pages = most};
  }
  std::size_t written = 0;
  WriteBackBuffer buffer;
  while (max_pages == 0 || written < max_pages) {
    if (written > 0 && how.give_way_to != nullptr && how.give_way_to->waited_for()) break;
    TakenBatch taken;
    FLASHDIR_TRY(take_write_back_batch(file_id, file_size, batch, max_pages != 0, nullptr, buffer, taken, lost));
    if (!taken.found) break;
    const WriteBackBatch& pages = taken.pages;
    // Backing I/O without the cache lock; a rewrite meanwhile clears the slot's flushing mark.
    Status unwritable;  // why the backing refused a page (EFBIG: past its largest file)
    auto wrote = write_page_runs(target, pages, taken.bytes, taken.size_bytes, page_size_, how,
                                 counters_.backing_errors, unwritable);
    if (!wrote.is_ok()) return wrote.status();
    // The batch's pages up to `done` are finished below; the file's pages from a refused one on
    // are dropped, and those left for a waiter stay dirty.
    const std::size_t done = *wrote;
    std::unique_lock<std::mutex> cache;
    FLASHDIR_TRY(settle_write_back(target, pages.first(done), pages.after(done), cache));
    written += done;
    if (!unwritable.is_ok())
      FLASHDIR_TRY(drop_unwritable(file_id, pages.keys[done].page_no, taken.size_bytes, unwritable, lost));
    if (done < pages.keys.size()) break;  // a page refused, or a waiter given way to
  }
  return Status::ok();
}

Status EngineCore::drain_write_back(std::uint64_t file_id, BackingFile& target,
                                    const std::atomic<std::uint64_t>& file_size, LostPages& lost) {
  const std::size_t batch = std::max<std::size_t>(1, options_.write_back_drain_batch_bytes / page_size_);
  const std::size_t sync_pages = std::max<std::size_t>(1, options_.write_back_drain_sync_bytes / page_size_);
  OwedPages owed;
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    owed = OwedPages(*slots_, file_id);
  }
  WriteBackBuffer buffers[2];
  std::size_t current_buffer = 0;
  WriteBackBatch unsynced;  // written to the backing file since its last sync
  TakenBatch current;
  FLASHDIR_TRY(take_write_back_batch(file_id, file_size, batch, false, &owed, buffers[current_buffer], current, lost));
  while (current.found) {
    Status unwritable;  // why the backing refused a page (EFBIG: past its largest file)
    // This batch goes to the backing file from a thread of its own (or in this one at get(),
    // where no thread can be made) while the next is read from the chip into the other buffer.
    auto writing = std::async(std::launch::async | std::launch::deferred, [&] {
      return write_page_runs(target, current.pages, current.bytes, current.size_bytes, page_size_, {},
                             counters_.backing_errors, unwritable);
    });
    TakenBatch next;
    const Status took =
        take_write_back_batch(file_id, file_size, batch, false, &owed, buffers[1 - current_buffer], next, lost);
    auto wrote = writing.get();
    FLASHDIR_TRY(took);
    if (!wrote.is_ok()) return wrote.status();
    const std::size_t done = *wrote;
    const WriteBackBatch& pages = current.pages;
    unsynced.add(pages.first(done));
    if (!unwritable.is_ok()) {
      // Nothing from the refused page on goes back: neither the rest of this batch nor the next.
      WriteBackBatch left;
      left.add(pages.after(done));
      left.add(next.pages.all());
      std::unique_lock<std::mutex> cache;
      FLASHDIR_TRY(settle_write_back(target, unsynced.all(), left.all(), cache));
      return drop_unwritable(file_id, pages.keys[done].page_no, current.size_bytes, unwritable, lost);
    }
    if (unsynced.slots.size() >= sync_pages || !next.found) {
      std::unique_lock<std::mutex> cache;
      FLASHDIR_TRY(settle_write_back(target, unsynced.all(), {}, cache));
      unsynced = {};
    }
    current = std::move(next);
    current_buffer = 1 - current_buffer;
  }
  return Status::ok();
}

Status EngineCore::take_write_back_batch(std::uint64_t file_id, const std::atomic<std::uint64_t>& file_size,
                                         std::size_t max_pages, bool scattered_limit, OwedPages* owed,
                                         WriteBackBuffer& buffer, TakenBatch& taken, LostPages& lost) {
  std::unique_lock cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  // Read under the cache lock, with the pages: a writer grows the size before it dirties a page
  // past it (under this lock), so every page taken lies below the size read here. A size read
  // before would cut a page a concurrent write added at its end out of the backing write, and
  // the page would be marked clean all the same (the write-back crash oracle found it once
  // writers stopped taking backing_mutex at every write).
  taken.size_bytes = file_size.load();
  // The file's lowest dirty pages first: a batch that extends the backing file then leaves no
  // dirty page below its end unwritten, so a cut before the next batch cannot leave a hole
  // (zeros) inside the file where a dirty page was only in the device RAM.
  std::vector<SlotIndex> slots;
  if (owed != nullptr) {
    slots = owed->take(*slots_, max_pages);
  } else {
    slots = slots_->dirty_slots_of(file_id);
    const auto by_page = [&](SlotIndex a, SlotIndex b) { return slots_->key(a).page_no < slots_->key(b).page_no; };
    const std::size_t take = std::min(max_pages, slots.size());
    std::partial_sort(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(take), slots.end(), by_page);
    slots.resize(take);
    if (scattered_limit) slots.resize(within_scattered_slot_limit(slots));
  }
  if (slots.empty()) return Status::ok();
  taken.found = true;
  const ByteSpan bytes = buffer.grown_to(slots.size(), page_size_);
  taken.bytes = bytes;
  return read_write_back_batch(cache, file_id, slots, taken.size_bytes, bytes, taken.pages, lost);
}

Status EngineCore::settle_write_back(BackingFile& target, BatchPages written, BatchPages left,
                                     std::unique_lock<std::mutex>& cache) {
  if (Status s = target.sync(); !s.is_ok()) {
    ++counters_.backing_errors;
    return s;
  }
  cache = std::unique_lock(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  // Dropped or taken by another page while the lock was free: not this write-back's any more.
  const auto still_holds = [&](SlotIndex slot, const SlotKey& key) {
    return slots_->occupied(slot) && slots_->key(slot) == key;
  };
  std::vector<SlotIndex> clean;
  for (std::size_t k = 0; k < written.slots.size(); ++k)
    if (still_holds(written.slots[k], written.keys[k]) && slots_->finish_flush(written.slots[k]))
      clean.push_back(written.slots[k]);
  for (std::size_t k = 0; k < left.slots.size(); ++k)
    if (still_holds(left.slots[k], left.keys[k])) slots_->cancel_flush(left.slots[k]);
  // The clean copy must be on the chip before its entry says clean: a cut that loses the data
  // still in the device RAM would otherwise leave the previous bytes of the slot, unflagged.
  if (Status s = store_->sync_slots(clean); !s.is_ok()) return fail(s);
  if (Status s = store_->mark_clean(clean); !s.is_ok()) return fail(s);
  counters_.written_back_pages += clean.size();
  slot_cleaned_.notify_all();
  return Status::ok();
}

Status EngineCore::drop_unwritable(std::uint64_t file_id, std::uint64_t from, std::uint64_t size_bytes,
                                   const Status& why, LostPages& lost) {
  // Lost: the dirty pages from there on below the file's end (those past it hold no bytes of it).
  std::uint64_t dropped = 0;
  for (SlotIndex slot : slots_->slots_of(file_id, from))
    if (slots_->dirty(slot) && slots_->key(slot).page_no * page_size_ < size_bytes) ++dropped;
  lost.add(why, dropped);
  return drop_file_pages(file_id, from);
}

Status EngineCore::read_write_back_batch(std::unique_lock<std::mutex>& cache, std::uint64_t file_id,
                                         const std::vector<SlotIndex>& slots, std::uint64_t size_bytes,
                                         ByteSpan bytes, WriteBackBatch& batch, LostPages& lost) {
  // Runs of consecutive slots holding consecutive pages: one FTL read each.
  struct Run {
    std::size_t first = 0;  // in `slots`
    std::uint32_t pages = 0;
    PreparedRead read;
  };
  std::vector<Run> runs;
  std::vector<SlotKey> keys;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    keys.push_back(slots_->key(slots[i]));
    const bool runs_on = !runs.empty() && runs.back().pages < kMaxRunPages && slots[i] == slots[i - 1] + 1 &&
                         keys[i].page_no == keys[i - 1].page_no + 1;
    if (runs_on) {
      ++runs.back().pages;
    } else {
      runs.push_back({.first = i, .pages = 1, .read = {}});
    }
  }
  std::vector<UnlockedRead> reads;
  for (Run& run : runs) {
    const ByteSpan run_bytes = bytes.subspan(run.first * page_size_, std::size_t{run.pages} * page_size_);
    if (Status s = ftl_.prepare_read(layout_.data_lpn(slots[run.first]), run.pages, run_bytes, run.read); !s.is_ok())
      return fail(s);
    reads.push_back({&run.read, run_bytes, Status::ok()});
  }
  // A rewrite meanwhile clears a slot's flushing mark; a drop clears the slot.
  for (SlotIndex slot : slots) slots_->set_flushing(slot);
  FLASHDIR_TRY(read_outside_lock(cache, reads));
  for (const UnlockedRead& read : reads)
    if (!read.result.is_ok() && read.result.code() != StatusCode::corruption) return fail(read.result);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const bool damaged_run = !reads[r].result.is_ok();
    for (std::size_t i = runs[r].first; i < runs[r].first + runs[r].pages; ++i) {
      // Dropped (truncated, or damaged as another read found) while the lock was free, or taken
      // by another page since: `bytes` may not be this page's.
      if (!slots_->occupied(slots[i]) || slots_->key(slots[i]) != keys[i]) continue;
      const ByteSpan piece = bytes.subspan(i * page_size_, page_size_);
      Status read = damaged_run ? ftl_.read(layout_.data_lpn(slots[i]), 1, piece) : Status::ok();
      if (read.code() == StatusCode::corruption) {
        // The only copy is damaged: counted, dropped, and reported to the caller (unless it
        // lies past the file's end, where it held nothing of the file).
        ++counters_.corrupt_pages;
        if (keys[i].page_no * page_size_ < size_bytes) {
          lost.add(damaged_dirty_page(file_id, keys[i].page_no), 1);
        }
        FLASHDIR_TRY(drop_slots({slots[i]}));
        continue;
      }
      if (!read.is_ok()) return fail(read);
      batch.slots.push_back(slots[i]);
      batch.keys.push_back(keys[i]);
      batch.buffer_page.push_back(i);
    }
  }
  return Status::ok();
}

Status EngineCore::flush_file_locked(FileState& file, std::size_t max_pages) {
  if (file.write_target == nullptr) return Status::ok();  // never written: nothing dirty
  FLASHDIR_TRY(note_outside_change(file, *file.write_target));
  // Grown behind the engine past the engine's end: the page holding that end goes back cut
  // there, and its cached copy then holds zeros where the backing file holds the bytes after it.
  const std::uint64_t engine_end = file.size_bytes.load();
  const bool grown_past_end = file.expected.size_bytes > engine_end && engine_end % page_size_ != 0;
  LostPages lost;
  // The flusher's batches give way to an fsync, close or truncate waiting for the file; a drain
  // is what such a waiter does itself.
  const GivingWayMutex* give_way_to = max_pages != 0 ? &file.backing_mutex : nullptr;
  Status flushed = write_back(file.file_id, *file.write_target, file.size_bytes, max_pages, give_way_to, lost);
  if (!lost.first.is_ok() && file.write_back_error.is_ok()) file.write_back_error = lost.first;
  FLASHDIR_TRY(flushed);
  FLASHDIR_TRY(note_own_change(file, *file.write_target));
  if (grown_past_end) {
    // Once back (clean), that page leaves the cache, and a read takes it from the backing file.
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    const std::optional<SlotIndex> slot = slots_->find(file.file_id, engine_end / page_size_);
    if (slot && !slots_->dirty(*slot)) FLASHDIR_TRY(drop_slots({*slot}));
  }
  if (file.marked_unwritten) {
    bool all_back = false;
    {
      std::lock_guard cache(cache_mutex_);
      all_back = slots_->dirty_slots_of(file.file_id, 1).empty();
    }
    if (all_back) {
      FLASHDIR_TRY(catalog_.mark_unwritten(file.file_id, false));
      file.marked_unwritten = false;
    }
  }
  // Pages past the backing's largest file went (every dirty page below them went back first):
  // the file ends where the backing file does, or the next fsync would try to extend it there.
  if (lost.past_largest_file) file.size_bytes = std::min(file.size_bytes.load(), file.expected.size_bytes);
  return Status::ok();
}

Status EngineCore::make_dirty_pages_durable(FileState& file, BackingFile& backing) {
  // The dirty pages become durable in the cache, then the backing file takes the file's size:
  // a restart writes dirty pages back up to the backing file's end, so the size must be there,
  // but only once the pages are — in the other order a cut between the two leaves zeros in
  // the backing file where the pages were.
  std::vector<SlotIndex> dirty;
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    dirty = slots_->dirty_slots_of(file.file_id);
  }
  // The catalog knows the file holds fsync'd data before the fsync returns: a restart that
  // finds the metadata damaged can then name it (the file lock keeps its pages as they are).
  if (!dirty.empty() && !file.marked_unwritten) {
    FLASHDIR_TRY(catalog_.mark_unwritten(file.file_id, true));
    file.marked_unwritten = true;
  }
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    if (Status s = store_->sync_slots(dirty); !s.is_ok()) return fail(s);
  }
  FLASHDIR_TRY(note_outside_change(file, backing));
  if (file.expected.size_bytes < file.size_bytes) {
    if (Status s = backing.truncate(file.size_bytes); !s.is_ok()) {
      ++counters_.backing_errors;
      return s;
    }
    FLASHDIR_TRY(note_own_change(file, backing));
  }
  return Status::ok();
}

Status EngineCore::take_write_back_error(FileState& file) {
  Status lost;
  {
    std::lock_guard cache(cache_mutex_);
    lost = std::exchange(file.lost_while_open, Status::ok());
  }
  Status error = std::exchange(file.write_back_error, Status::ok());
  return error.is_ok() ? lost : error;
}

Status EngineCore::write_back(FileHandle handle, bool take_error) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  FileState& file = *(*open)->file;
  std::lock_guard backing_lock(file.backing_mutex);
  FLASHDIR_TRY(flush_file_locked(file, 0));
  return take_error ? take_write_back_error(file) : Status::ok();
}

void EngineCore::run_flusher() {
  std::unique_lock cache(cache_mutex_);
  const auto above = [&](std::uint8_t percent) {
    return slots_->dirty_count() * 100ULL > std::uint64_t{slots_->capacity()} * percent;
  };
  const auto pressed = [&] {
    return writers_waiting_ > 0 || above(options_.dirty_high_watermark_percent) ||
           (draining_ && above(options_.dirty_low_watermark_percent));
  };
  const auto delay_over = [&] {
    return !delayed_write_backs_.empty() && delayed_write_backs_.front().due <= std::chrono::steady_clock::now();
  };
  const auto wanted = [&] { return stopping_ || pressed() || delay_over() || !streaming_files_.empty(); };
  for (;;) {
    if (!wanted()) {
      // Woken by a write, a close, or the next delay falling due (a close that starts one wakes
      // the flusher to wait for it).
      if (delayed_write_backs_.empty()) {
        flush_wanted_.wait(cache);
      } else {
        const auto next_due = delayed_write_backs_.front().due;
        flush_wanted_.wait_until(cache, next_due);
      }
      continue;
    }
    if (stopping_) return;
    if (!pressed() && delay_over()) {
      // A file closed a delay ago goes back whole (an entry of a file written back and closed
      // again since then is stale: its own entry comes later).
      const DelayedWriteBack next = delayed_write_backs_.front();
      delayed_write_backs_.pop_front();
      const auto it = dirty_files_.find(next.file_id);
      if (it == dirty_files_.end() || it->second->write_back_due != next.due || !failed_.is_ok()) continue;
      const std::shared_ptr<FileState> file = it->second;
      cache.unlock();
      finish_delayed_write_back(file);
      cache.lock();
      continue;
    }
    std::uint64_t file_id = 0;
    std::size_t batch = pressure_batch_pages();
    const bool streaming = !pressed();
    if (!streaming) {
      draining_ = true;
      file_id = slots_->next_dirty_file();
    } else {
      // No pressure: a batch of a sequential stream's pages behind its writer.
      file_id = *streaming_files_.begin();
      streaming_files_.erase(streaming_files_.begin());
      batch = stream_batch_pages();
      if (slots_->dirty_count_of(file_id) < batch) continue;
    }
    const auto it = dirty_files_.find(file_id);
    if (file_id == 0 || it == dirty_files_.end() || !failed_.is_ok()) {
      draining_ = false;
      flush_wanted_.wait_for(cache, std::chrono::milliseconds(100));
      continue;
    }
    const std::shared_ptr<FileState> file = it->second;
    cache.unlock();
    Status flushed;
    {
      std::lock_guard backing_lock(file->backing_mutex);
      flushed = flush_file_locked(*file, batch);
    }
    cache.lock();
    flush_error_ = flushed;
    // A stream's next batch follows unless an fsync, close or truncate waits for the file (it
    // drains the rest itself); the writer's next write asks again.
    if (flushed.is_ok() && streaming && !pressed() && !file->backing_mutex.waited_for() &&
        slots_->dirty_count_of(file_id) >= batch)
      streaming_files_.insert(file_id);
    if (!flushed.is_ok()) {
      // Writers waiting for a clean slot get the error; the flusher tries again later.
      slot_cleaned_.notify_all();
      draining_ = false;
      flush_wanted_.wait_for(cache, std::chrono::milliseconds(100));
    }
    if (!above(options_.dirty_low_watermark_percent)) draining_ = false;
  }
}

void EngineCore::stop_flusher() {
  {
    std::lock_guard cache(cache_mutex_);
    stopping_ = true;
  }
  flush_wanted_.notify_all();
  slot_cleaned_.notify_all();
  if (flusher_.joinable()) flusher_.join();
}

}  // namespace flashdir::cache
