// Stopping the engine: after its chip failed (a power cut in the tests, an I/O error), after its
// catalog failed a write (a full disk), or when told to (Engine::stop). A stopped engine answers
// every call with the reason and leaves the cache as a restart expects it; before it stops on
// request, it makes the write-back data it holds durable on its chip.
#include <fmt/format.h>

#include "absl/container/flat_hash_set.h"
#include "cache/engine_core.h"

namespace flashdir::cache {

Status EngineCore::stop(const Status& reason) {
  std::vector<std::shared_ptr<FileState>> holding;
  {
    std::lock_guard names(namespace_mutex_);
    std::lock_guard cache(cache_mutex_);
    if (!failed_.is_ok()) return Status::ok();
    static_cast<void>(fail(reason));  // from here on every call fails: no page changes any more
    holding = files_holding_dirty_pages();
  }
  slot_cleaned_.notify_all();  // writers waiting for the flusher get the reason
  return keep_write_back_data(holding);
}

// As fsync does for one file: the dirty pages become durable on the chip (whose image has its
// space reserved when the cache is made, so a full disk does not stop it), then each backing
// file takes the size the engine gave it, since the restart that resumes the cache writes
// dirty pages back up to the backing file's end. Unsynced write-back data is kept too: the stop
// is no power cut, and its writers were told their writes succeeded.
Status EngineCore::keep_write_back_data(const std::vector<std::shared_ptr<FileState>>& files) {
  {
    std::lock_guard cache(cache_mutex_);
    std::vector<SlotIndex> dirty;
    for (const auto& file : files) {
      const std::vector<SlotIndex> slots = slots_->dirty_slots_of(file->file_id);
      dirty.insert(dirty.end(), slots.begin(), slots.end());
    }
    FLASHDIR_TRY(store_->sync_slots(dirty));
  }
  for (const auto& file : files) {
    std::lock_guard backing_lock(file->backing_mutex);
    if (file->write_target == nullptr || file->expected.size_bytes >= file->size_bytes) continue;
    if (Status s = file->write_target->truncate(file->size_bytes); !s.is_ok()) {
      ++counters_.backing_errors;
      return s.with_context(fmt::format("extending {} to the size its write-back data needs", file->path));
    }
    FLASHDIR_TRY(note_own_change(*file, *file->write_target));
  }
  return Status::ok();
}

std::optional<Status> EngineCore::stopped() const {
  std::lock_guard cache(cache_mutex_);
  Status reason = check_alive();
  if (reason.is_ok() || closed_) return std::nullopt;
  return reason;
}

bool EngineCore::holds_unwritten_data(FileHandle handle) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return false;
  std::lock_guard cache(cache_mutex_);
  return slots_->dirty_count_of((*open)->file->file_id) != 0;
}

std::vector<UnwrittenFile> EngineCore::files_with_unwritten_data() {
  std::lock_guard names(namespace_mutex_);
  std::lock_guard cache(cache_mutex_);
  std::vector<UnwrittenFile> files;
  for (const auto& file : files_holding_dirty_pages()) {
    const std::uint64_t device = file->expected.device == 0 ? root_device_ : file->expected.device;
    files.push_back(UnwrittenFile{file->path, device, file->expected.inode});
  }
  return files;
}

std::vector<std::shared_ptr<FileState>> EngineCore::files_holding_dirty_pages() {
  std::vector<std::shared_ptr<FileState>> files;
  absl::flat_hash_set<std::uint64_t> listed;
  const auto list = [&](const std::shared_ptr<FileState>& file) {
    if (listed.insert(file->file_id).second && slots_->dirty_count_of(file->file_id) != 0) files.push_back(file);
  };
  for (const auto& [key, file] : open_files_) list(file);
  for (const auto& [file_id, file] : dirty_files_) list(file);
  return files;
}

Status EngineCore::fail(Status status) {
  if (failed_.is_ok()) failed_ = status.with_context("the cache engine stopped");
  return failed_;
}

Status EngineCore::check_alive() const {
  if (closed_) return Status::invalid_argument("the cache engine is closed");
  if (!failed_.is_ok()) return failed_;
  if (Status catalog = catalog_.write_failure(); !catalog.is_ok()) return catalog.with_context("the cache engine stopped");
  return Status::ok();
}

}  // namespace flashdir::cache
