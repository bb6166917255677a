// The namespace as the engine sees it (doc/cache.md "Files, staleness and the catalog"):
// renames and unlinks of backing files, and what the catalog and the open files do about them.
#include <string>

#include "cache/engine_core.h"

namespace flashdir::cache {
namespace {

// Whether a rename of `source` moves `path`: the file itself, or anything under the directory.
bool moved_by_rename(const std::string& path, const std::string& source) {
  return path == source || (path.size() > source.size() && path.compare(0, source.size(), source) == 0 &&
                            path[source.size()] == '/');
}

}  // namespace

Status EngineCore::rename(std::string_view from, std::string_view to) {
  FLASHDIR_TRY(backing_.rename(from, to));
  return renamed(from, to);
}

Status EngineCore::renamed(std::string_view from, std::string_view to) {
  std::lock_guard names(namespace_mutex_);
  auto replaced = catalog_.files_replaced_by_rename(from, to);
  if (!replaced.is_ok()) return replaced.status();
  // The backing file has moved: the catalog follows it whatever happens to the chip, or a
  // restart would look for the file's dirty pages under its old name (and lose them). Pages of
  // a replaced file that cannot be dropped now (the engine stopped, e.g. a power cut met by the
  // flusher) name a file id the catalog no longer has: a restart drops them as orphans.
  Status dropped;
  {
    std::lock_guard cache(cache_mutex_);
    dropped = check_alive();
    for (const CatalogFile& gone : *replaced)
      if (dropped.is_ok()) dropped = drop_file_pages(gone.file_id, 0);
  }
  for (const CatalogFile& gone : *replaced) forget_dirty_file(gone.file_id);
  FLASHDIR_TRY(catalog_.rename(from, to));
  FLASHDIR_TRY(refresh_after_rename(to));
  // Open files follow: the file itself, or everything under a renamed directory.
  const std::string source(from);
  const std::string target(to);
  std::vector<std::pair<std::string, std::shared_ptr<FileState>>> moved;
  for (auto it = open_files_.begin(); it != open_files_.end();) {
    const std::string& path = it->first;
    if (moved_by_rename(path, source)) {
      moved.emplace_back(target + path.substr(source.size()), std::move(it->second));
      open_files_.erase(it++);
    } else {
      ++it;
    }
  }
  for (auto& [path, state] : moved) {
    if (auto clash = open_files_.find(path); clash != open_files_.end()) clash->second->unlinked = true;
    state->path = path;
    open_files_[path] = std::move(state);
  }
  // Files closed with dirty pages still waiting for the flusher follow too (still_dirty finds
  // them by path).
  std::lock_guard cache(cache_mutex_);
  for (auto& [file_id, state] : dirty_files_) {
    if (state->open_handles > 0) continue;
    if (moved_by_rename(state->path, source)) state->path = target + state->path.substr(source.size());
  }
  return dropped;
}

Status EngineCore::refresh_after_rename(std::string_view to) {
  // rename(2) changes the renamed file's ctime, and only that: a file that is otherwise as the
  // catalog knows it keeps its pages. (Files under a renamed directory keep their ctime.)
  auto known = catalog_.find_by_path(to);
  if (!known.is_ok()) return known.status().code() == StatusCode::not_found ? Status::ok() : known.status();
  auto file = backing_.open(to);
  if (!file.is_ok()) return Status::ok();  // not a file the engine can open: validated at its next open
  auto identity = (*file)->stat();
  if (!identity.is_ok()) return identity.status();
  BackingIdentity expected = known->identity;
  expected.ctime_ns = identity->ctime_ns;
  if (*identity != expected) return Status::ok();
  return catalog_.update_identity(known->file_id, *identity);
}

Status EngineCore::unlink(std::string_view relative_path) {
  FLASHDIR_TRY(backing_.unlink(relative_path));
  return unlinked(relative_path);
}

Status EngineCore::unlinked(std::string_view relative_path) {
  std::lock_guard names(namespace_mutex_);
  auto known = catalog_.find_by_path(relative_path);
  if (!known.is_ok()) return known.status().code() == StatusCode::not_found ? Status::ok() : known.status();
  // The catalog forgets the path now, so that a new file there gets a new id. A file still open
  // is read and written on under its old id; its pages go at its last release, and a restart
  // drops any left as orphans.
  FLASHDIR_TRY(catalog_.remove_file(known->file_id));
  if (auto open = open_files_.find(std::string(relative_path)); open != open_files_.end()) {
    open->second->unlinked = true;
    open_files_.erase(open);
    return Status::ok();
  }
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    FLASHDIR_TRY(drop_file_pages(known->file_id, 0));
  }
  // A file released with dirty pages that failed to go back: nothing left to write back.
  forget_dirty_file(known->file_id);
  return Status::ok();
}

}  // namespace flashdir::cache
