// Write-back with a delay (EngineOptions::write_back_delay_ms, doc/cache.md "A close that does
// not wait"): a close makes the file's dirty pages durable in the cache and leaves them to the
// flusher, which writes the file back once the delay since that close is over.
#include <spdlog/spdlog.h>

#include <chrono>

#include "cache/engine_core.h"

namespace flashdir::cache {

Status EngineCore::write_back_at_close(FileHandle handle) {
  if (!delays_write_back()) return write_back(handle, true);
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  FileState& file = *(*open)->file;
  std::unique_lock file_lock(file.lock);
  std::lock_guard backing_lock(file.backing_mutex);
  FLASHDIR_TRY(defer_write_back(file));
  return take_write_back_error(file);
}

Status EngineCore::defer_write_back(FileState& file) {
  // Through the handle of the file's last write (the closing one may be a reader's, which
  // cannot extend the file); none: nothing was written, nothing is dirty.
  if (file.write_target == nullptr) return Status::ok();
  FLASHDIR_TRY(make_dirty_pages_durable(file, *file.write_target));
  std::lock_guard cache(cache_mutex_);
  if (!file.write_back_due && slots_->dirty_count_of(file.file_id) > 0) schedule_write_back(file);
  return Status::ok();
}

void EngineCore::schedule_write_back(FileState& file) {
  file.write_back_due = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.write_back_delay_ms);
  delayed_write_backs_.push_back({*file.write_back_due, file.file_id});
  flush_wanted_.notify_one();
}

void EngineCore::finish_delayed_write_back(const std::shared_ptr<FileState>& file) {
  Status flushed;
  {
    std::lock_guard backing_lock(file->backing_mutex);
    flushed = flush_file_locked(*file, 0);
  }
  if (flushed.is_ok()) {
    ++counters_.delayed_write_backs;
    std::lock_guard names(namespace_mutex_);
    flushed = settle_closed_file(file);
    if (flushed.is_ok()) return;
  }
  // Nobody's close waits for this write-back to report its error: the log says it, the pages
  // stay dirty in the cache, and the flusher tries again a delay later.
  spdlog::error("writing back {} after its close failed (tried again in {} ms): {}", file->path,
                options_.write_back_delay_ms, flushed.to_string());
  std::lock_guard cache(cache_mutex_);
  flush_error_ = flushed;
  if (dirty_files_.contains(file->file_id) && slots_->dirty_count_of(file->file_id) > 0) schedule_write_back(*file);
}

Status EngineCore::settle_closed_file(const std::shared_ptr<FileState>& file) {
  std::lock_guard backing_lock(file->backing_mutex);
  {
    std::lock_guard cache(cache_mutex_);
    const auto it = dirty_files_.find(file->file_id);
    if (it == dirty_files_.end() || it->second != file) return Status::ok();
    file->write_back_due.reset();
    // Open again: its last close decides what follows (and starts a delay of its own).
    if (file->open_handles > 0) return Status::ok();
    if (slots_->dirty_count_of(file->file_id) > 0) {
      // Written and closed again since its pages went back (that close found this delay running).
      if (delays_write_back()) schedule_write_back(*file);
      return Status::ok();
    }
    dirty_files_.erase(it);
  }
  if (file->write_target == nullptr) return Status::ok();
  auto attributes = attributes_of(*file->write_target);
  file->set_write_target(nullptr);
  if (!attributes.is_ok()) return attributes.status();
  // The write-back moved the backing file's times: the next open validates against them.
  return catalog_.update(file->file_id, file->path, *attributes);
}

Status EngineCore::write_back_closed(std::string_view relative_path, const BackingAttributes& attributes) {
  std::shared_ptr<FileState> file;
  {
    std::lock_guard names(namespace_mutex_);
    file = still_dirty(key_of(relative_path, relative_to_root(attributes)));
  }
  if (file == nullptr) return Status::ok();
  {
    std::lock_guard backing_lock(file->backing_mutex);
    FLASHDIR_TRY(flush_file_locked(*file, 0));
  }
  std::lock_guard names(namespace_mutex_);
  return settle_closed_file(file);
}

}  // namespace flashdir::cache
