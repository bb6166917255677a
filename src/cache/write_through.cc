// Write-through (doc/cache.md "Writes"): the backing file takes each write before the
// cache does, and the write is acknowledged only once the backing file has it. A large write's
// pages go into the cache behind it, while the next write travels to the backing file: one
// after the other, the cache's copy (a chip program per page) held a writer over a store with
// 1 ms calls and 1 Gbit/s to 0.85 of the store's own speed, 0.90 overlapped.
#include <algorithm>
#include <cstring>
#include <future>

#include "cache/engine_core.h"

namespace flashdir::cache {
namespace {

// Writes of fewer pages are stored at once: their copy costs less than the thread that would
// overlap it with the next write.
constexpr std::uint64_t kStoredBehindMinPages = 16;

}  // namespace

Result<std::size_t> EngineCore::write_through(OpenHandle& open, std::uint64_t offset, ConstByteSpan data) {
  FileState& file = *open.file;
  BackingFile& backing = *open.backing;
  WrittenPages& behind = file.written_behind;
  const std::uint64_t end = offset + data.size();
  const std::uint64_t first_page = offset / page_size_;
  const std::uint64_t last_page = (end - 1) / page_size_;

  // The last write's pages are stored while this one goes to the backing file: nobody reads
  // the file meanwhile (the file lock is held exclusively), and this write's pages are
  // prepared only after, from a cache that has them.
  std::future<Status> stored_behind;
  if (behind.pending) {
    stored_behind = std::async(std::launch::async | std::launch::deferred,
                               [&] { return store_written_pages(file.file_id, behind); });
  }
  const Status sent = backing.write(offset, data);
  if (stored_behind.valid()) FLASHDIR_TRY(stored_behind.get());  // its buffer takes this write's pages
  if (!sent.is_ok()) {
    ++counters_.backing_errors;
    // What the backing file now holds in that range is unknown: the cache must not answer for it.
    FLASHDIR_TRY(drop_range(file.file_id, first_page, last_page));
    return sent;
  }
  const std::uint64_t new_size = std::max(file.size_bytes.load(), end);
  {
    std::lock_guard backing_lock(file.backing_mutex);
    file.size_bytes = new_size;
    file.own_writes_unseen = true;
    file.touched_since_open = true;
  }
  if (file.bypassed) {
    // Written around the engine too: the cache answers for none of it.
    FLASHDIR_TRY(drop_range(file.file_id, first_page, last_page));
    return data.size();
  }
  // A file holds its pages only while they wait (a buffer per open file written to would add
  // up); the others are prepared in this thread's.
  const bool store_behind = options_.store_writes_behind && last_page - first_page + 1 >= kStoredBehindMinPages;
  thread_local WrittenPages stored_now;
  WrittenPages& written = store_behind ? behind : stored_now;
  written.admit = options_.write_sequential_cutoff_bytes == 0 ||
                  file.write_stream.note(offset, data.size()) <= options_.write_sequential_cutoff_bytes;
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    FLASHDIR_TRY(prepare_written_pages(file.file_id, offset, data, new_size, written));
  }
  if (store_behind) {
    behind.pending = true;
    return data.size();
  }
  behind.bytes = {};  // nothing of the file waits
  FLASHDIR_TRY(store_written_pages(file.file_id, stored_now));
  return data.size();
}

Status EngineCore::store_written_behind(FileState& file) {
  WrittenPages& behind = file.written_behind;
  std::lock_guard lock(behind.mutex);
  if (!behind.pending) return Status::ok();
  Status stored = store_written_pages(file.file_id, behind);
  behind.bytes = {};
  return stored;
}

Status EngineCore::prepare_written_pages(std::uint64_t file_id, std::uint64_t offset, ConstByteSpan data,
                                         std::uint64_t new_size, WrittenPages& out) {
  const std::uint64_t end = offset + data.size();
  out.first_page = offset / page_size_;
  const auto page_count = static_cast<std::size_t>((end - 1) / page_size_ - out.first_page + 1);
  if (out.bytes.size() < page_count * page_size_) out.bytes.resize(page_count * page_size_);
  out.keep.assign(page_count, false);
  for (std::size_t i = 0; i < page_count; ++i) {
    const std::uint64_t page = out.first_page + i;
    const std::uint64_t page_start = page * page_size_;
    const bool whole = offset <= page_start && end >= std::min(page_start + page_size_, new_size);
    const ByteSpan bytes = ByteSpan(out.bytes).subspan(i * page_size_, page_size_);
    if (!whole) {
      auto cached = read_cached_run(file_id, page, 1, bytes);
      if (!cached.is_ok()) return cached.status();
      if (*cached == 0) continue;  // not cached (or corrupt, and now dropped)
    }
    const std::uint64_t from = std::max(offset, page_start);
    const std::uint64_t to = std::min(end, page_start + page_size_);
    std::memcpy(bytes.data() + (from - page_start), data.data() + (from - offset), to - from);
    // A whole page that ends the file short of the page's end: zeros past the end.
    if (whole) std::memset(bytes.data() + (to - page_start), 0, page_size_ - (to - page_start));
    out.keep[i] = true;
  }
  return Status::ok();
}

Status EngineCore::store_written_pages(std::uint64_t file_id, WrittenPages& written) {
  written.pending = false;
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  const std::size_t page_count = written.keep.size();
  for (std::size_t i = 0; i < page_count;) {
    if (!written.keep[i]) {
      ++i;
      continue;
    }
    std::size_t stop = i;
    while (stop < page_count && written.keep[stop]) ++stop;
    if (!written.admit) counters_.cutoff_bypassed_pages += stop - i;
    auto stored = store_pages(file_id, written.first_page + i, static_cast<std::uint32_t>(stop - i),
                              ConstByteSpan(written.bytes).subspan(i * page_size_, (stop - i) * page_size_),
                              written.admit);
    if (!stored.is_ok()) return stored.status();
    i = stop;
  }
  return Status::ok();
}

}  // namespace flashdir::cache
