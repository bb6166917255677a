// What the engine knows of each open backing file's attributes (doc/cache.md "Files, staleness
// and the catalog"): the attributes its own changes left, and changes made behind it, whose
// clean pages cannot be trusted. Writes after the first of a run take no stat (one round trip
// each on a network store) unless they reach the file's end: the next stat the engine makes for
// another reason takes the times of write-through's writes as its own if the rest of the file
// is as it left it.
#include "cache/engine_core.h"

namespace flashdir::cache {

Status EngineCore::check_before_write(FileState& file, BackingFile& backing, bool reaches_end) {
  // Write-back's runs need no more: it stats the file before each write-back, with nothing of
  // its own unseen, and drops the clean pages of a file changed behind it.
  const bool forced = reaches_end && options_.write_mode != WriteMode::write_back;
  const bool in_run = file.own_writes_unseen || file.cached_writes_checked;
  if (in_run && !file.bypassed && !forced) return Status::ok();
  // The pages stored behind the last write go in first: the check may drop the clean ones.
  FLASHDIR_TRY(store_written_behind(file));
  FLASHDIR_TRY(note_outside_change(file, backing));
  file.cached_writes_checked = options_.write_mode == WriteMode::write_back;
  return Status::ok();
}

Status EngineCore::note_outside_change(FileState& file, BackingFile& backing) {
  auto now = attributes_of(backing);
  if (!now.is_ok()) return now.status();
  const bool changed = file.changed_behind(*now);
  file.expected = *now;
  file.own_writes_unseen = false;
  file.cached_writes_checked = false;
  file.touched_since_open = true;
  if (!changed) return Status::ok();
  // Write-through and write-around: the backing file's size is the file's (the callers hold
  // the file lock). In write-back the engine's size stays its own: the flusher calls this
  // without the file lock, and an append takes the larger of the two itself.
  if (options_.write_mode != WriteMode::write_back) file.size_bytes = now->size_bytes;
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  return drop_clean_pages(file.file_id);
}

Status EngineCore::drop_clean_pages(std::uint64_t file_id) {
  // Counted as stale drops: at a restart too, where they were changed behind the engine.
  std::vector<SlotIndex> clean;
  for (SlotIndex slot : slots_->slots_of(file_id))
    if (!slots_->dirty(slot)) clean.push_back(slot);
  FLASHDIR_TRY(invalidate(file_id, clean));
  if (!clean.empty()) ++counters_.stale_drops;
  return Status::ok();
}

Status EngineCore::note_own_change(FileState& file, BackingFile& backing) {
  auto now = attributes_of(backing);
  if (!now.is_ok()) return now.status();
  file.expected = *now;
  file.own_writes_unseen = false;
  file.cached_writes_checked = false;
  file.touched_since_open = true;
  return Status::ok();
}

}  // namespace flashdir::cache
