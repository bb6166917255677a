// Which file a cached page belongs to (doc/daemon.md "File identity"): the backing directory a
// cache belongs to, the rule that tells its files apart, and the catalog record of each file
// an open meets.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cache/engine_core.h"

namespace flashdir::cache {

Status EngineCore::check_backing_root(const BackingRoot& root, bool used_before) {
  auto recorded = catalog_.backing_root();
  if (recorded.is_ok()) {
    const std::string differences = recorded->differences(root.record);
    if (differences.empty()) return Status::ok();
    return Status::invalid_argument(fmt::format(
        "the cache belongs to backing directory {}, and {} is not it ({}); its files and dirty pages are that "
        "directory's: mount it over {} or choose another cache",
        recorded->path, root.record.path, differences, recorded->path));
  }
  if (recorded.status().code() != StatusCode::not_found) return recorded.status();
  // A used cache whose catalog lost the record cannot prove its tree: nothing of it is trusted
  // against this one beyond what each file proves itself (its record's inode, owner and times,
  // checked at every open and before any write-back; pages of files the catalog lost are
  // orphans). This tree becomes the cache's.
  if (used_before)
    spdlog::error("the cache's catalog lost the record of its backing directory; it is bound to {} now",
                  root.record.path);
  return catalog_.put_backing_root(root.record);
}

Result<std::uint64_t> EngineCore::reserve_file_ids() {
  auto next = catalog_.next_file_id();
  if (!next.is_ok() || file_ids_ == nullptr) return next;
  // Past every id that may have been given out, whatever the catalog remembers; the limit then
  // moves past the ids this run may give out, before the catalog gives the first.
  const std::uint64_t first = std::max(*next, file_ids_->limit());
  auto limit = file_ids_->raise(first);
  if (!limit.is_ok()) return limit.status();
  FLASHDIR_TRY(catalog_.skip_file_ids_to(first));
  catalog_.reserve_ids(*limit, [ids = file_ids_](std::uint64_t id) { return ids->raise(id); });
  return next;
}

Result<IdentityRule> EngineCore::recorded_identity_rule(IdentityRule wanted) {
  auto recorded = catalog_.identity_rule();
  if (recorded.is_ok()) return recorded;
  if (recorded.status().code() != StatusCode::not_found) return recorded.status();
  FLASHDIR_TRY(catalog_.put_identity_rule(wanted));
  return wanted;
}

Status EngineCore::change_identity_rule(IdentityRule wanted) {
  // The records were found by the other rule's key: under this one a record may name a file
  // its pages do not belong to (a renumbered inode, a path another file took). The restart wrote
  // the dirty pages back under the old rule; the clean ones go.
  auto files = catalog_.all_files();
  if (!files.is_ok()) return files.status();
  {
    std::lock_guard cache(cache_mutex_);
    for (const CatalogFile& file : *files) FLASHDIR_TRY(drop_clean_pages(file.file_id));
  }
  spdlog::warn("the cache told files apart by {} and now by {}: its clean pages were dropped", identity_rule_name(
      wanted == IdentityRule::inode ? IdentityRule::path : IdentityRule::inode), identity_rule_name(wanted));
  return catalog_.put_identity_rule(wanted);
}

Result<BackingAttributes> EngineCore::attributes_of(BackingFile& file) {
  auto attributes = file.stat();
  if (!attributes.is_ok()) {
    ++counters_.backing_errors;
    return attributes.status();
  }
  return relative_to_root(*attributes);
}

BackingAttributes EngineCore::relative_to_root(BackingAttributes attributes) const {
  if (attributes.device == root_device_) attributes.device = 0;
  return attributes;
}

FileKey EngineCore::key_of(std::string_view path, const BackingAttributes& attributes) const {
  if (rule_ == IdentityRule::path) return FileKey{0, 0, std::string(path)};
  return FileKey{attributes.device, attributes.inode, {}};
}

std::shared_ptr<FileState> EngineCore::still_dirty(const FileKey& key) {
  // Few files wait for the flusher: a scan is cheaper than a second catalog lookup per open.
  std::lock_guard cache(cache_mutex_);
  for (const auto& [file_id, state] : dirty_files_)
    if (state->open_handles == 0 && !state->detached && state->key == key) return state;
  return nullptr;
}

std::shared_ptr<FileState> EngineCore::state_of_record(std::uint64_t file_id) {
  for (const auto& [key, state] : open_files_)
    if (state->file_id == file_id) return state;
  std::lock_guard cache(cache_mutex_);
  if (const auto it = dirty_files_.find(file_id); it != dirty_files_.end()) return it->second;
  return nullptr;
}

Status EngineCore::forget_file(std::uint64_t file_id) {
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    FLASHDIR_TRY(drop_file_pages(file_id, 0));
  }
  Status forgotten = catalog_.remove_file(file_id);
  return forgotten.code() == StatusCode::not_found ? Status::ok() : forgotten;
}

Status EngineCore::detach(const std::shared_ptr<FileState>& state) {
  if (auto it = open_files_.find(state->key); it != open_files_.end() && it->second == state) open_files_.erase(it);
  state->detached = true;
  // Its record keeps its pages (the dirty ones still go back through its own descriptor, or
  // after a cut to lost+found) but no longer names the path.
  Status unindexed = catalog_.unindex(state->file_id);
  return unindexed.code() == StatusCode::not_found ? Status::ok() : unindexed;
}

Result<std::optional<CatalogFile>> EngineCore::renumbered_record(std::string_view path,
                                                                  const BackingAttributes& attributes) {
  auto at_path = catalog_.find_by_path(path);
  if (!at_path.is_ok()) {
    if (at_path.status().code() == StatusCode::not_found) return std::optional<CatalogFile>();
    return at_path.status();
  }
  // Owner, size, both times and birth time (where kept) the same, the number alone changed: on
  // a file system with stable numbers that is not another file (a new one has a new ctime).
  if (at_path->attributes.inode == attributes.inode || !at_path->attributes.same_contents_and_owner(attributes) ||
      state_of_record(at_path->file_id) != nullptr)
    return std::optional<CatalogFile>();
  if (counters_.renumbered_files++ == 0) {
    spdlog::warn("the backing directory gave {} a new inode number with nothing else changed: its file system "
                 "renumbers inodes; mount with identity=path so that files are known by path",
                 std::string(path));
  }
  return std::optional<CatalogFile>(std::move(at_path.value()));
}

Result<std::uint64_t> EngineCore::validate(std::string_view path, const BackingAttributes& attributes) {
  std::optional<CatalogFile> known;
  auto found = rule_ == IdentityRule::inode ? catalog_.find_by_inode(attributes.device, attributes.inode)
                                            : catalog_.find_by_path(path);
  if (found.is_ok()) {
    // Under the inode rule a record met at another path is this file renamed behind the mount
    // only if birth times prove it: without them it may be a number the backing gave to another
    // file (a renumbering it does not admit to), with the same size and times (files written in
    // one clock tick have the same times).
    const bool proven = rule_ == IdentityRule::path || found->relative_path == path ||
                        (found->attributes.birth_ns != 0 && attributes.birth_ns != 0);
    if (proven) known = std::move(found.value());
  } else if (found.status().code() != StatusCode::not_found) {
    return found.status();
  }
  if (rule_ == IdentityRule::inode && (!known || !known->attributes.same_contents_and_owner(attributes))) {
    // Not the file its inode's record describes, or no record: a backing that renumbered its
    // inodes may have given the number to another file, and this one a new number.
    auto renumbered = renumbered_record(path, attributes);
    if (!renumbered.is_ok()) return renumbered.status();
    if (*renumbered) known = std::move(renumbered.value());
  }
  if (!known) {
    auto added = catalog_.add_file(path, attributes);
    if (!added.is_ok()) return added.status();
    return added->file_id;
  }
  // A record of another owner, other contents, or (birth time) another file that reused the
  // number: its pages are dropped durably before the record takes the new attributes.
  if (!known->attributes.same_contents_and_owner(attributes)) {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    FLASHDIR_TRY(drop_stale(known->file_id));
  }
  const bool same = rule_ == IdentityRule::inode ? known->attributes.same_file_and_contents(attributes)
                                                 : known->attributes.same_contents_and_owner(attributes);
  if (!same || known->relative_path != path) FLASHDIR_TRY(catalog_.update(known->file_id, path, attributes));
  return known->file_id;
}

}  // namespace flashdir::cache
