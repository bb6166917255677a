// The namespace as the engine sees it (doc/cache.md "Files, staleness and the catalog"):
// renames and unlinks of backing files made through the engine's caller, and what the catalog
// and the open files do about them. Names are only how files were reached: a file's cached
// state moves with a rename and goes only when the file itself is gone (doc/daemon.md
// "File identity").
#include <string>

#include "absl/container/flat_hash_set.h"
#include "cache/engine_core.h"

namespace flashdir::cache {
namespace {

// The path `path` has after a rename of `source` to `target`: the file itself, or anything
// under the directory; nullopt if the rename does not move it.
std::optional<std::string> path_after_rename(const std::string& path, std::string_view source,
                                             std::string_view target) {
  if (path == source) return std::string(target);
  if (path.size() > source.size() && path.compare(0, source.size(), source) == 0 && path[source.size()] == '/')
    return std::string(target) + path.substr(source.size());
  return std::nullopt;
}

}  // namespace

Status EngineCore::rename(std::string_view from, std::string_view to) {
  FLASHDIR_TRY(backing_.rename(from, to));
  return renamed(from, to, RenameKind::replace);
}

Status EngineCore::renamed(std::string_view from, std::string_view to, RenameKind kind) {
  std::lock_guard names(namespace_mutex_);
  const bool exchange = kind == RenameKind::exchange;
  // The catalog follows the backing files whatever happens to the chip, or a restart would look
  // for a file's dirty pages under its old name.
  auto replaced = catalog_.rename(from, to, exchange);
  if (!replaced.is_ok()) return replaced.status();

  // The open files (and those waiting for the flusher) follow: their paths, and under the path
  // rule their keys. A file a plain rename replaced keeps its state: it is served on through its
  // descriptors; under the path rule its key now reaches the renamed file, so it is detached.
  std::vector<std::shared_ptr<FileState>> states;
  absl::flat_hash_set<FileState*> seen;
  for (const auto& [key, state] : open_files_)
    if (seen.insert(state.get()).second) states.push_back(state);
  {
    std::lock_guard cache(cache_mutex_);
    for (const auto& [file_id, state] : dirty_files_)
      if (!state->detached && seen.insert(state.get()).second) states.push_back(state);
  }
  std::vector<std::shared_ptr<FileState>> rekeyed;
  for (const auto& state : states) {
    auto moved = path_after_rename(state->path, from, to);
    if (!moved && exchange) moved = path_after_rename(state->path, to, from);
    if (!moved) {
      if (!exchange && rule_ == IdentityRule::path && path_after_rename(state->path, to, to))
        FLASHDIR_TRY(detach(state));
      continue;
    }
    state->path = *moved;
    if (rule_ != IdentityRule::path) continue;
    if (auto it = open_files_.find(state->key); it != open_files_.end() && it->second == state) open_files_.erase(it);
    state->key.path = *moved;
    rekeyed.push_back(state);
  }
  for (const auto& state : rekeyed)
    if (state->open_handles > 0) open_files_[state->key] = state;

  // A replaced file nobody holds is gone (cached files have one name): its pages go with it. One
  // that is held loses them at its last release, which finds it has no name left.
  Status dropped;
  for (const CatalogFile& gone : *replaced) {
    if (const std::shared_ptr<FileState> held = state_of_record(gone.file_id)) {
      held->name_removed = true;
    } else if (dropped.is_ok()) {
      dropped = forget_file(gone.file_id);
    }
  }
  FLASHDIR_TRY(refresh_after_rename(to));
  if (exchange) FLASHDIR_TRY(refresh_after_rename(from));
  return dropped;
}

Status EngineCore::refresh_after_rename(std::string_view to) {
  // rename(2) changes the renamed file's ctime, and only that: a file that is otherwise as the
  // catalog knows it keeps its pages. (Files under a renamed directory keep their ctime.)
  auto known = catalog_.find_by_path(to);
  if (!known.is_ok()) return known.status().code() == StatusCode::not_found ? Status::ok() : known.status();
  auto file = backing_.open(to);
  if (!file.is_ok()) return Status::ok();  // not a file the engine can open: validated at its next open
  auto now = attributes_of(**file);
  if (!now.is_ok()) return now.status();
  BackingAttributes expected = known->attributes;
  expected.ctime_ns = now->ctime_ns;
  const bool same = rule_ == IdentityRule::inode ? now->same_file_and_contents(expected)
                                                 : now->same_contents_and_owner(expected);
  if (!same) return Status::ok();
  return catalog_.update(known->file_id, to, *now);
}

Status EngineCore::unlink(std::string_view relative_path) {
  FLASHDIR_TRY(backing_.unlink(relative_path));
  return unlinked(relative_path);
}

Status EngineCore::unlinked(std::string_view relative_path) {
  std::lock_guard names(namespace_mutex_);
  auto known = catalog_.find_by_path(relative_path);
  if (!known.is_ok()) return known.status().code() == StatusCode::not_found ? Status::ok() : known.status();
  const std::shared_ptr<FileState> state = state_of_record(known->file_id);
  if (state == nullptr) return forget_file(known->file_id);
  if (state->open_handles > 0) {
    // Served on through its descriptors; its last release finds it has no name left (and,
    // under the path rule, that its key reaches whatever comes to the path next).
    state->name_removed = true;
    return rule_ == IdentityRule::path ? detach(state) : Status::ok();
  }
  // Released with dirty pages that failed to go back: nothing left to write back to, unless the
  // file still has a name (a link made behind the mount).
  if (rule_ == IdentityRule::inode) {
    std::lock_guard backing_lock(state->backing_mutex);
    if (state->write_target != nullptr) {
      auto attributes = attributes_of(*state->write_target);
      if (attributes.is_ok() && attributes->link_count > 0) return Status::ok();
    }
  }
  forget_dirty_file(known->file_id);
  return forget_file(known->file_id);
}

}  // namespace flashdir::cache
