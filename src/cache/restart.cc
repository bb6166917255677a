// Hot restart: what the metadata store recovered becomes the slot table, and the dirty pages
// a cut left (write-back) go back to their backing files before the engine serves anything
// (doc/cache.md "Restart after a cut").
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "cache/engine_core.h"

namespace flashdir::cache {

Status EngineCore::recover(const RecoveredSlots& recovered, IdentityRule recorded_rule,
                           std::uint64_t catalog_next) {
  restart_.clean_shutdown = recovered.clean_shutdown;
  restart_.dropped_slots = recovered.dropped;
  restart_.dirty_slots = recovered.dirty;
  std::vector<SlotIndex> orphans;
  std::vector<std::uint64_t> dirty_files;
  absl::flat_hash_set<std::uint64_t> dirty_orphan_files;
  absl::flat_hash_set<std::uint64_t> lost_records;  // ids past the catalog's next id: it lost them
  // Per file, whether the catalog knows it: asked once a file, not once a cached page (which
  // took two thirds of the restart of a full 4 GiB cache, 2.6 s of it then, 0.8 s after).
  absl::flat_hash_map<std::uint64_t, bool> in_catalog;
  std::uint64_t last_file = 0;
  bool last_known = false;
  auto known = [&](std::uint64_t file_id) -> Result<bool> {
    if (file_id == last_file && !in_catalog.empty()) return last_known;
    auto [it, first_seen] = in_catalog.try_emplace(file_id);
    if (first_seen) {
      auto file = catalog_.find_by_id(file_id);
      if (!file.is_ok() && file.status().code() != StatusCode::not_found) return file.status();
      it->second = file.is_ok();
    }
    last_file = file_id;
    last_known = it->second;
    return last_known;
  };
  // After an unclean stop the store's search for file pages named twice runs on a second thread
  // while the slot table loads (each takes a fifth of the restart of a full cache); the table
  // takes every recovered slot, and the older names it finds leave it again before anything is
  // served (no caller can reach the engine before open returns).
  std::vector<std::uint32_t> duplicates;
  std::thread search;
  if (!recovered.clean_shutdown) search = std::thread([&] { duplicates = store_->find_duplicates(recovered.usable); });
  slots_->load(recovered.usable);
  if (search.joinable()) search.join();
  std::vector<SlotIndex> duplicate_slots;
  for (std::uint32_t i : duplicates) {
    duplicate_slots.push_back(recovered.usable[i].slot);
    restart_.dirty_slots -= recovered.usable[i].entry.dirty ? 1 : 0;
  }
  slots_->remove(duplicate_slots);
  restart_.dropped_slots += duplicate_slots.size();
  auto next_duplicate = duplicates.begin();
  for (std::uint32_t i = 0; i < recovered.usable.size(); ++i) {
    if (next_duplicate != duplicates.end() && *next_duplicate == i) {
      ++next_duplicate;
      continue;  // dropped below
    }
    const RecoveredSlot& found = recovered.usable[i];
    auto catalogued = known(found.entry.file_id);
    if (!catalogued.is_ok()) return catalogued.status();
    if (!*catalogued) {
      // Named by no record: a file unlinked while open, or one the catalog lost. Never served;
      // a dirty page (the only copy of its bytes) is kept in lost+found below.
      if (found.entry.file_id >= catalog_next) lost_records.insert(found.entry.file_id);
      if (!found.entry.dirty) {
        orphans.push_back(found.slot);
        continue;
      }
      dirty_orphan_files.insert(found.entry.file_id);
    }
    if (found.entry.dirty) {
      slots_->set_dirty(found.slot);
      if (*catalogued) dirty_files.push_back(found.entry.file_id);
    }
  }
  slots_->remove(orphans);
  if (!orphans.empty()) FLASHDIR_TRY(store_->drop(orphans, Durability::forced));
  if (!duplicate_slots.empty()) {
    spdlog::warn("{} cached file pages were named by two slots each on the chip: the older names are dropped",
                 duplicate_slots.size());
    FLASHDIR_TRY(store_->drop(duplicate_slots, Durability::forced));
  }
  restart_.catalog_lost_files = lost_records.size();
  if (!lost_records.empty()) {
    spdlog::error("the catalog does not know {} files the cache's metadata names with ids from {} on (it lost "
                  "records: its write-ahead log deleted, or an older copy put back): their pages are never served",
                  lost_records.size(), catalog_next);
  }
  for (std::uint64_t file_id : dirty_orphan_files) {
    restart_.orphan_slots += slots_->slots_of(file_id).size();
    FLASHDIR_TRY(save_lost_dirty_pages(CatalogFile{file_id, {}, {}},
                                       fmt::format("the catalog has no record of file {}", file_id)));
  }
  restart_.usable_slots = slots_->used();
  restart_.orphan_slots += orphans.size();
  std::sort(dirty_files.begin(), dirty_files.end());
  dirty_files.erase(std::unique(dirty_files.begin(), dirty_files.end()), dirty_files.end());
  FLASHDIR_TRY(write_back_recovered(dirty_files, recorded_rule));
  FLASHDIR_TRY(settle_unwritten_marks(recovered.damaged_pages));
  const std::uint64_t seen = restart_.usable_slots + restart_.dropped_slots + restart_.orphan_slots;
  restart_.usable_fraction = seen == 0 ? 1.0 : static_cast<double>(restart_.usable_slots) / static_cast<double>(seen);
  return Status::ok();
}

Status EngineCore::write_back_recovered(const std::vector<std::uint64_t>& file_ids, IdentityRule recorded_rule) {
  for (std::uint64_t file_id : file_ids) {
    auto known = catalog_.find_by_id(file_id);
    if (!known.is_ok()) return known.status();
    const std::uint64_t dirty = slots_->dirty_slots_of(file_id).size();
    auto file = backing_.open(known->relative_path);
    if (!file.is_ok()) {
      if (file.status().code() != StatusCode::not_found && file.status().code() != StatusCode::invalid_argument)
        return file.status();
      // The file is not at its recorded place (gone, renamed behind the mount, or something
      // other than a regular file took its name): nowhere proven to write its pages.
      FLASHDIR_TRY(save_lost_dirty_pages(*known, file.status().message()));
      continue;
    }
    auto before = attributes_of(**file);
    if (!before.is_ok()) return before.status();
    if (!known->attributes.proves_same_file(*before, recorded_rule)) {
      FLASHDIR_TRY(save_lost_dirty_pages(
          *known, fmt::format("{} is now another file (inode {}, owner {}:{}; recorded: inode {}, owner {}:{})",
                              known->relative_path, before->inode, before->uid, before->gid, known->attributes.inode,
                              known->attributes.uid, known->attributes.gid)));
      continue;
    }
    if (!before->same_contents_and_owner(known->attributes)) {
      // Changed since the catalog last saw it (the engine's own write-backs before the cut, or
      // someone else): its clean pages cannot be trusted; its dirty ones are the newest data.
      FLASHDIR_TRY(drop_clean_pages(file_id));
    }
    // Cut at the backing file's size: bytes past it were never fsync'd (fsync extends the file
    // once they are durable here). The pages from the one holding that end on then leave: they
    // may hold bytes past it that the backing file never got, and a later extension of the file
    // must read zeros there.
    const std::uint64_t end = before->size_bytes;
    std::uint64_t past_end = 0;
    for (SlotIndex slot : slots_->dirty_slots_of(file_id))
      if (slots_->key(slot).page_no * page_size_ >= end) ++past_end;
    // Pages that can never go back (damaged, or past the backing's largest file) are dropped
    // and reported; failing the open for them would lose nothing less, and the next open would
    // not even know.
    LostPages lost;
    const std::atomic<std::uint64_t> size{end};
    FLASHDIR_TRY(write_back(file_id, **file, size, 0, nullptr, lost));
    if (lost.count != 0) {
      note_lost_at_restart(lost.count, lost.first.with_context(known->relative_path));
      note_file_loss(known->relative_path, fmt::format("{} pages that were only in the cache are lost: {}", lost.count,
                                                       lost.first.message()));
    }
    {
      std::lock_guard cache(cache_mutex_);
      FLASHDIR_TRY(drop_file_pages(file_id, end / page_size_));
    }
    restart_.written_back_slots += dirty - past_end - lost.count;
    auto after = attributes_of(**file);
    if (!after.is_ok()) return after.status();
    FLASHDIR_TRY(catalog_.update(file_id, known->relative_path, *after));
  }
  return Status::ok();
}

Status EngineCore::save_lost_dirty_pages(const CatalogFile& file, const std::string& reason) {
  std::vector<SlotIndex> dirty = slots_->dirty_slots_of(file.file_id);
  std::sort(dirty.begin(), dirty.end(),
            [&](SlotIndex a, SlotIndex b) { return slots_->key(a).page_no < slots_->key(b).page_no; });
  if (lost_found_ == nullptr) {
    note_lost_at_restart(dirty.size(), Status::not_found(fmt::format("{} (file {}): {}", file.relative_path,
                                                                      file.file_id, reason)));
  } else {
    auto saved = lost_found_->create(file, reason);
    if (!saved.is_ok()) return saved.status().with_context("keeping dirty pages the restart could not write back");
    std::vector<std::uint8_t> page(page_size_);
    std::uint64_t kept = 0;
    for (SlotIndex slot : dirty) {
      const std::uint64_t page_no = slots_->key(slot).page_no;
      Status read = ftl_.read(layout_.data_lpn(slot), 1, page);
      if (read.code() == StatusCode::corruption) {
        ++counters_.corrupt_pages;
        note_lost_at_restart(1, read.with_context(fmt::format("page {} of {}", page_no, file.relative_path)));
        continue;
      }
      if (!read.is_ok()) return fail(read);
      FLASHDIR_TRY((*saved)->write_page(page_no, page));
      ++kept;
    }
    FLASHDIR_TRY((*saved)->finish());
    restart_.saved_dirty_slots += kept;
    restart_.saved_files.push_back((*saved)->name());
    spdlog::error("{} dirty pages of {} (file {}, uid {}) could not be written back: {}; saved as lost+found/{}", kept,
                  file.relative_path, file.file_id, file.attributes.uid, reason, (*saved)->name());
  }
  FLASHDIR_TRY(invalidate(file.file_id, slots_->slots_of(file.file_id)));
  const Status forgotten = catalog_.remove_file(file.file_id);
  return forgotten.code() == StatusCode::not_found ? Status::ok() : forgotten;
}

Status EngineCore::settle_unwritten_marks(std::uint64_t damaged_metadata_pages) {
  auto marked = catalog_.unwritten_files();
  if (!marked.is_ok()) return marked.status();
  for (std::uint64_t file_id : *marked) {
    auto file = catalog_.find_by_id(file_id);
    if (!file.is_ok() && file.status().code() != StatusCode::not_found) return file.status();
    if (file.is_ok() && damaged_metadata_pages != 0) {
      note_file_loss(file->relative_path,
                     fmt::format("{} damaged metadata pages may have described pages of it that an fsync had made "
                                 "durable in the cache and that had not gone back yet; they are lost",
                                 damaged_metadata_pages));
    }
    if (!file.is_ok() || slots_->dirty_slots_of(file_id, 1).empty()) FLASHDIR_TRY(catalog_.mark_unwritten(file_id, false));
  }
  return Status::ok();
}

void EngineCore::note_file_loss(const std::string& path, const std::string& why) {
  if (restart_.losses.size() < RestartReport::kMaxListedFiles) restart_.losses.push_back(fmt::format("{}: {}", path, why));
  ++restart_.files_with_losses;
}

void EngineCore::note_lost_at_restart(std::uint64_t pages, const Status& reason) {
  if (restart_.lost_dirty_slots == 0) restart_.lost_dirty_reason = reason.to_string();
  restart_.lost_dirty_slots += pages;
}

}  // namespace flashdir::cache
