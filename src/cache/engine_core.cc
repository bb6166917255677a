#include "cache/engine_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_set.h"

namespace flashdir::cache {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The metadata scheme a cache was first used with, from the options text in its catalog.
Result<MetadataScheme> recorded_scheme(const std::string& options_text) {
  const auto json = nlohmann::json::parse(options_text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("metadata") || !json["metadata"].is_string())
    return Status::corruption("the catalog's engine options are not readable JSON with a metadata scheme");
  return parse_metadata_scheme(json["metadata"].get<std::string>());
}

}  // namespace

EngineCore::EngineCore(Ftl& ftl, Catalog& catalog, BackingStore& backing, const EngineOptions& options,
                       const SlotLayout& layout, EngineServices services)
    : ftl_(ftl),
      catalog_(catalog),
      backing_(backing),
      lost_found_(services.lost_found),
      file_ids_(services.file_ids),
      options_(options),
      layout_(layout),
      page_size_(layout.page_size_bytes),
      commit_pending_pages_(options.commit_pending_bytes == 0
                                ? 0
                                : std::max<std::uint64_t>(1, options.commit_pending_bytes / layout.page_size_bytes)) {}

Result<std::unique_ptr<EngineCore>> EngineCore::open(Ftl& ftl, Catalog& catalog, BackingStore& backing,
                                                     const EngineOptions& options, EngineServices services) {
  const auto start = std::chrono::steady_clock::now();
  FLASHDIR_TRY(options.validate());
  auto layout = SlotLayout::of(ftl, services.slot_alignment);
  if (!layout.is_ok()) return layout.status();
  std::unique_ptr<EngineCore> core(new EngineCore(ftl, catalog, backing, options, *layout, services));

  auto recorded = catalog.options_text();
  if (!recorded.is_ok() && recorded.status().code() != StatusCode::not_found) return recorded.status();
  // A cache an engine opened before: its catalog records the options, or (if it lost them) its
  // file id limit has moved.
  const bool used_before = recorded.is_ok() || (services.file_ids != nullptr && services.file_ids->limit() > 0);
  auto root = backing.root();
  if (!root.is_ok()) return root.status();
  FLASHDIR_TRY(core->check_backing_root(*root, used_before));
  core->root_device_ = root->device;
  auto catalog_next = core->reserve_file_ids();
  if (!catalog_next.is_ok()) return catalog_next.status();
  const IdentityRule wanted =
      options.identity.value_or(root->stable_inode_numbers ? IdentityRule::inode : IdentityRule::path);
  auto recorded_rule = core->recorded_identity_rule(wanted);
  if (!recorded_rule.is_ok()) return recorded_rule.status();

  if (!used_before) {
    auto store = MetadataStore::format(ftl, *layout, options.metadata);
    if (!store.is_ok()) return store.status();
    core->store_ = std::move(store.value());
    core->slots_.emplace(*core->store_);
    core->restart_.clean_shutdown = true;
  } else {
    // A catalog that lost its options lost the scheme with them: the one asked for now is tried
    // (the metadata pages refuse another).
    if (recorded.is_ok()) {
      auto scheme = recorded_scheme(recorded.value());
      if (!scheme.is_ok()) return scheme.status();
      if (*scheme != options.metadata)
        return Status::invalid_argument(fmt::format(
            "the cache keeps its metadata with {}, not {} (fixed when it was first used)",
            metadata_scheme_name(*scheme), metadata_scheme_name(options.metadata)));
    }
    bool restored = false;
    if (services.restart_image != nullptr) {
      auto from_image = core->restore_from_image(services.restart_image, options.metadata, *catalog_next);
      if (!from_image.is_ok()) return from_image.status();
      restored = *from_image;
    }
    if (!restored) {
      auto opened = MetadataStore::open(ftl, *layout, options.metadata, MetadataStore::DuplicateSearch::by_caller);
      if (!opened.is_ok()) return opened.status();
      core->store_ = std::move(opened->first);
      core->slots_.emplace(*core->store_);
      FLASHDIR_TRY(core->recover(opened->second, *recorded_rule, *catalog_next));
    }
  }
  if (*recorded_rule != wanted) FLASHDIR_TRY(core->change_identity_rule(wanted));
  core->rule_ = wanted;
  FLASHDIR_TRY(catalog.put_options_text(options.to_json()));
  core->restart_.seconds = seconds_since(start);
  if (options.write_mode == WriteMode::write_back) core->flusher_ = std::thread([raw = core.get()] { raw->run_flusher(); });
  if (options.commit_interval_ms > 0) core->committer_ = std::thread([raw = core.get()] { raw->run_committer(); });
  return core;
}

EngineCore::~EngineCore() {
  stop_committer();
  stop_flusher();
}

// ---- files ----

void EngineCore::forget_dirty_file(std::uint64_t file_id) {
  std::shared_ptr<FileState> gone;
  {
    std::lock_guard cache(cache_mutex_);
    const auto it = dirty_files_.find(file_id);
    if (it == dirty_files_.end()) return;
    gone = std::move(it->second);
    dirty_files_.erase(it);
  }
  // Its backing descriptor closes here (an unlinked file's blocks come back), unless the flusher
  // is using it right now; it finds no dirty page of the file left.
  std::lock_guard backing_lock(gone->backing_mutex);
  gone->set_write_target(nullptr);
}

Result<FileHandle> EngineCore::open_file(std::string_view relative_path, std::unique_ptr<BackingFile> file,
                                         std::optional<BackingAttributes> caller_attributes) {
  std::lock_guard names(namespace_mutex_);
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());  // a stopped engine takes no new file
  }
  if (file == nullptr) {
    auto opened = backing_.open(relative_path);
    if (!opened.is_ok()) return opened.status();
    file = std::move(opened.value());
  }
  // The caller's stat of the file it just opened serves: one round trip less on a slow store.
  auto attributes = caller_attributes ? Result<BackingAttributes>(relative_to_root(*caller_attributes))
                                     : attributes_of(*file);
  if (!attributes.is_ok()) return attributes.status();
  const std::string path(relative_path);
  const FileKey key = key_of(path, *attributes);
  std::shared_ptr<FileState> state;
  if (const auto it = open_files_.find(key); it != open_files_.end()) state = it->second;
  if (state == nullptr) state = still_dirty(key);
  const auto changed_since = [&](FileState& known) {
    // Asked again under the file's lock (no write of the engine's in flight) and its backing
    // lock (no write-back) before a change is believed: the caller's stat may predate the
    // engine's own latest change to the file (the flusher's write-back of a batch, a write of
    // another open), which would pass for a change behind it and, under the path rule, split
    // one file into two open states, each serving its own pages.
    std::shared_lock file_lock(known.lock);
    std::lock_guard backing_lock(known.backing_mutex);
    if (!known.changed_behind(*attributes)) return false;
    auto now = attributes_of(*file);
    return !now.is_ok() || known.changed_behind(*now);
  };
  if (state != nullptr && changed_since(*state)) {
    if (rule_ == IdentityRule::path) {
      // The path rule cannot tell a file changed behind the engine from another file put at its
      // path: the state there keeps serving its own opens (its descriptors reach its own file),
      // and this open gets a state and a record of its own.
      FLASHDIR_TRY(detach(state));
      state = nullptr;
    } else {
      // Close-to-open while another handle still has the file open (the kernel sends RELEASE
      // asynchronously, so a close(2) and the next open(2) may meet here): a change behind the
      // engine since its own last change drops the clean pages now, as a validation would.
      std::unique_lock file_lock(state->lock);
      FLASHDIR_TRY(store_written_behind(*state));
      std::lock_guard backing_lock(state->backing_mutex);
      FLASHDIR_TRY(note_outside_change(*state, *file));
    }
  }
  if (state == nullptr) {
    // Validated only when nobody has it open through the engine: while open, the engine's own
    // writes change the backing file's times, and its pages follow them.
    auto file_id = validate(path, *attributes);
    if (!file_id.is_ok()) return file_id.status();
    state = std::make_shared<FileState>();
    state->file_id = *file_id;
    state->key = key;
    state->path = path;
    state->size_bytes = attributes->size_bytes;
    state->expected = *attributes;
  }
  // Under the inode rule a file reached by another path was renamed behind the mount.
  state->path = path;
  open_files_[key] = state;
  ++state->open_handles;
  std::unique_lock handles(handles_mutex_);
  const FileHandle handle{next_handle_++};
  handles_.emplace(handle.value, std::make_unique<OpenHandle>(state, std::move(file)));
  return handle;
}

bool EngineCore::only_read_since_validated(FileState& file) {
  // Its record is what the open validated, and it keeps its name: the last release has nothing
  // to record, and asks the backing nothing (a round trip at every reader's close on a network
  // store). A change made behind the engine meanwhile is found by the next open's validation
  // against the record, which drops the pages then.
  if (file.touched_since_open || file.write_target != nullptr || file.bypassed || file.detached || file.name_removed)
    return false;
  std::lock_guard cache(cache_mutex_);
  return !dirty_files_.contains(file.file_id);
}

Result<OpenHandle*> EngineCore::handle_of(FileHandle handle) {
  std::shared_lock handles(handles_mutex_);
  const auto it = handles_.find(handle.value);
  if (it == handles_.end()) return Status::invalid_argument(fmt::format("no open file handle {}", handle.value));
  return it->second.get();
}

Result<std::uint64_t> EngineCore::size(FileHandle handle) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  return (*open)->file->size_bytes.load();
}

Status EngineCore::release(FileHandle handle) {
  std::lock_guard names(namespace_mutex_);
  std::unique_ptr<OpenHandle> released;
  {
    std::unique_lock handles(handles_mutex_);
    const auto it = handles_.find(handle.value);
    if (it == handles_.end()) return Status::invalid_argument(fmt::format("no open file handle {}", handle.value));
    released = std::move(it->second);
    handles_.erase(it);
  }
  FileState& file = *released->file;
  if (--file.open_handles > 0) return Status::ok();
  if (auto it = open_files_.find(file.key); it != open_files_.end() && it->second == released->file)
    open_files_.erase(it);
  // No operation on the file is in flight: its last handle is gone. A read's fill left to run
  // after its reply (DeferredFill) holds the file's read lock until it is done.
  { std::unique_lock filled(file.lock); }
  FLASHDIR_TRY(store_written_behind(file));
  std::lock_guard backing_lock(file.backing_mutex);
  file.cached_writes_checked = false;  // the next open's writes start a run of their own
  if (only_read_since_validated(file)) return take_write_back_error(file);
  // A file with no name left is read by nobody again: its dirty pages need not go back.
  bool gone = false;
  if (file.write_target != nullptr) {
    auto before = attributes_of(*file.write_target);
    if (!before.is_ok()) return before.status();
    gone = before->link_count == 0;
  }
  // The last release writes the file's dirty pages back into its own descriptor (they stay
  // dirty, and the file known to the flusher, if that fails), or with a delay leaves them to
  // the flusher.
  if (!gone) FLASHDIR_TRY(delays_write_back() ? defer_write_back(file) : flush_file_locked(file, 0));
  auto attributes = attributes_of(*released->backing);
  if (!attributes.is_ok()) return attributes.status();
  gone = gone || attributes->link_count == 0;
  bool still_dirty = false;
  {
    std::lock_guard cache(cache_mutex_);
    if (auto it = dirty_files_.find(file.file_id); it != dirty_files_.end() && it->second == released->file) {
      still_dirty = !gone && !slots_->dirty_slots_of(file.file_id, 1).empty();
      if (!still_dirty) dirty_files_.erase(it);
    }
  }
  if (!still_dirty) file.set_write_target(nullptr);
  if (gone || file.detached) {
    // Nothing will read its pages again (no name left, or its key reaches another file). One
    // that keeps dirty pages (its write-back failed) stays with the flusher, record and all.
    if (!still_dirty) FLASHDIR_TRY(forget_file(file.file_id));
    return take_write_back_error(file);
  }
  if (file.changed_behind(*attributes)) {
    // Changed behind the engine while open: the next open must not trust the cached pages.
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    FLASHDIR_TRY(drop_stale(file.file_id));
  }
  // A file only read since the open that validated it, and unchanged: the catalog holds what
  // it holds (no write, and no sync of the catalog's log, for a reader's close).
  if (file.touched_since_open || !attributes->same_file_and_contents(file.expected))
    FLASHDIR_TRY(catalog_.update(file.file_id, file.path, *attributes));
  return take_write_back_error(file);
}

// ---- data ----

Result<std::size_t> EngineCore::write(FileHandle handle, std::uint64_t offset, ConstByteSpan data) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  std::unique_lock file_lock((*open)->file->lock);
  return write_locked(**open, offset, data, false);
}

Result<std::size_t> EngineCore::append(FileHandle handle, ConstByteSpan data) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  FileState& file = *(*open)->file;
  std::unique_lock file_lock(file.lock);
  std::uint64_t end = 0;
  {
    std::lock_guard backing_lock(file.backing_mutex);
    FLASHDIR_TRY(check_before_write(file, *(*open)->backing, true));
    // In write-back the engine's end runs ahead of the backing file's, unless the file grew
    // behind the engine.
    end = std::max(file.size_bytes.load(), file.expected.size_bytes);
  }
  return write_locked(**open, end, data, true);
}

Result<std::size_t> EngineCore::write_locked(OpenHandle& open, std::uint64_t offset, ConstByteSpan data,
                                             bool checked) {
  FileState& file = *open.file;
  BackingFile& backing = *open.backing;
  ++counters_.write_requests;
  if (data.empty()) return std::size_t{0};
  const std::uint64_t end = offset + data.size();
  const std::uint64_t first_page = offset / page_size_;
  const std::uint64_t last_page = (end - 1) / page_size_;
  counters_.written_pages += last_page - first_page + 1;
  if (options_.write_mode == WriteMode::write_back) {
    // A page written in part is completed from its cached copy, which a change behind the
    // engine may have made stale.
    if (!checked && (offset % page_size_ != 0 || end % page_size_ != 0)) {
      std::lock_guard backing_lock(file.backing_mutex);
      FLASHDIR_TRY(check_before_write(file, backing, false));
    }
    return write_into_cache(open, offset, data);
  }

  if (!checked) {
    // A write that follows the engine's own unseen writes checks nothing, unless it reaches the
    // file's end: without the backing's word on whose the new times are (NFS's wcc
    // attributes), the stat before it could not tell a change behind the engine from its own
    // last write either (doc/cache.md "Files, staleness and the catalog").
    std::lock_guard backing_lock(file.backing_mutex);
    FLASHDIR_TRY(check_before_write(file, backing, end >= file.size_bytes.load()));
  }
  if (options_.write_mode == WriteMode::write_around) {
    // The cached copies leave first, durably: a cut after the backing write must not find them.
    FLASHDIR_TRY(drop_range(file.file_id, first_page, last_page));
    if (Status s = backing.write(offset, data); !s.is_ok()) {
      ++counters_.backing_errors;
      return s;
    }
    std::lock_guard backing_lock(file.backing_mutex);
    file.size_bytes = std::max(file.size_bytes.load(), end);
    file.own_writes_unseen = true;
    file.touched_since_open = true;
    return data.size();
  }

  return write_through(open, offset, data);
}

Status EngineCore::truncate(FileHandle handle, std::uint64_t size_bytes) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  FileState& file = *(*open)->file;
  std::unique_lock file_lock(file.lock);
  FLASHDIR_TRY(store_written_behind(file));
  std::lock_guard backing_lock(file.backing_mutex);
  FLASHDIR_TRY(note_outside_change(file, *(*open)->backing));
  // write-back: the dirty pages go back first, so that the backing file holds every byte kept.
  FLASHDIR_TRY(flush_file_locked(file, 0));
  // Pages from the one holding the new end on are dropped first (durably): after a cut the
  // cache must not bring back bytes beyond an end the backing file may already have.
  {
    std::lock_guard cache(cache_mutex_);
    FLASHDIR_TRY(check_alive());
    FLASHDIR_TRY(drop_file_pages(file.file_id, size_bytes / page_size_));
  }
  if (Status s = (*open)->backing->truncate(size_bytes); !s.is_ok()) {
    ++counters_.backing_errors;
    return s;
  }
  file.size_bytes = size_bytes;
  return note_own_change(file, *(*open)->backing);
}

Status EngineCore::fallocate(FileHandle handle, int mode, std::uint64_t offset, std::uint64_t length) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  FileState& file = *(*open)->file;
  BackingFile& backing = *(*open)->backing;
  std::unique_lock file_lock(file.lock);
  if (length == 0) return Status::invalid_argument("fallocate of an empty range");
  FLASHDIR_TRY(store_written_behind(file));
  std::lock_guard backing_lock(file.backing_mutex);
  FLASHDIR_TRY(note_outside_change(file, backing));
  FLASHDIR_TRY(flush_file_locked(file, 0));
  // Plain allocation (with or without KEEP_SIZE) leaves every byte as it was; the other modes
  // change bytes in the range, and collapse and insert move every byte after it.
  constexpr int kKeepSize = 0x01;  // FALLOC_FL_KEEP_SIZE
  if ((mode & ~kKeepSize) != 0) {
    constexpr int kMovesTail = 0x08 | 0x20;  // FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE
    const std::uint64_t first_page = offset / page_size_;
    if ((mode & kMovesTail) != 0) {
      std::lock_guard cache(cache_mutex_);
      FLASHDIR_TRY(check_alive());
      FLASHDIR_TRY(drop_file_pages(file.file_id, first_page));
    } else {
      FLASHDIR_TRY(drop_range(file.file_id, first_page, (offset + length - 1) / page_size_));
    }
  }
  if (Status s = backing.allocate(mode, offset, length); !s.is_ok()) {
    ++counters_.backing_errors;
    return s;
  }
  FLASHDIR_TRY(note_own_change(file, backing));
  file.size_bytes = file.expected.size_bytes;
  return Status::ok();
}

Status EngineCore::bypass(FileHandle handle) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  FileState& file = *(*open)->file;
  // The exclusive file lock waits out the reads that may be filling pages from the backing file.
  std::unique_lock file_lock(file.lock);
  FLASHDIR_TRY(store_written_behind(file));
  file.bypassed = true;
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  return drop_clean_pages(file.file_id);
}

Status EngineCore::fsync(FileHandle handle) {
  auto open = handle_of(handle);
  if (!open.is_ok()) return open.status();
  FileState& file = *(*open)->file;
  std::unique_lock file_lock(file.lock);
  if (options_.write_mode == WriteMode::write_back) {
    std::lock_guard backing_lock(file.backing_mutex);
    FLASHDIR_TRY(make_dirty_pages_durable(file, *(*open)->backing));
    FLASHDIR_TRY(take_write_back_error(file));
  }
  // Write-through and write-around: every byte written is in the backing file already.
  if (Status s = (*open)->backing->sync(); !s.is_ok()) {
    ++counters_.backing_errors;
    return s;
  }
  return Status::ok();
}

Status EngineCore::close() {
  stop_committer();
  stop_flusher();
  std::lock_guard names(namespace_mutex_);
  {
    // Files still open: no operation on them is in flight any more.
    std::shared_lock handles(handles_mutex_);
    for (const auto& [value, open] : handles_) FLASHDIR_TRY(store_written_behind(*open->file));
  }
  std::vector<std::shared_ptr<FileState>> dirty;
  {
    std::lock_guard cache(cache_mutex_);
    for (const auto& [file_id, file] : dirty_files_) dirty.push_back(file);
  }
  for (const auto& file : dirty) {
    {
      std::lock_guard backing_lock(file->backing_mutex);
      FLASHDIR_TRY(flush_file_locked(*file, 0));
    }
    FLASHDIR_TRY(settle_closed_file(file));
  }
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  closed_ = true;
  if (Status s = ftl_.flush(); !s.is_ok()) return fail(s);
  if (Status s = store_->close_clean(); !s.is_ok()) return fail(s);
  return Status::ok();
}

// ---- slots (cache_mutex_ held) ----

Result<std::uint32_t> EngineCore::store_pages(std::uint64_t file_id, std::uint64_t first_page, std::uint32_t count,
                                              ConstByteSpan data, bool admit_new, bool dirty) {
  // Never more new pages at once than half the cache: the rest of it must stay evictable.
  const std::uint32_t limit = std::max<std::uint32_t>(1, slots_->capacity() / 2);
  std::vector<SlotWrite> writes;
  std::vector<std::uint32_t> pieces;  // which page of `data` each write carries
  std::vector<bool> admitted;         // whether each write fills a new slot
  absl::flat_hash_set<SlotIndex> in_batch;
  std::uint32_t handled = 0;
  for (std::uint32_t i = 0; i < count; ++i, handled = i) {
    const std::uint64_t page = first_page + i;
    if (const auto cached = slots_->find(file_id, page)) {
      writes.push_back({*cached, SlotEntry{file_id, page, dirty || slots_->dirty(*cached)}});
      admitted.push_back(false);
      in_batch.insert(*cached);
    } else {
      if (dirty && writes.size() >= limit) break;
      if (!admit_new || writes.size() >= limit) continue;
      // The hand passes over the slots this batch writes (fewer than half the cache); with the
      // rest dirty, a full turn finds none.
      std::optional<SlotIndex> free = slots_->next_for_insert();
      for (std::uint32_t turned = 0; free && in_batch.contains(*free); ++turned)
        free = turned < 2 * slots_->capacity() ? slots_->next_for_insert() : std::nullopt;
      if (!free) {
        if (dirty) break;  // every slot is dirty: the writer waits for the flusher
        continue;
      }
      const SlotIndex slot = *free;
      in_batch.insert(slot);
      if (slots_->occupied(slot)) {
        // The CLOCK victim: its drop reaches the chip with the page's next write (a cut before
        // brings back a page that is still correct). Out of the index before the store clears
        // the entry the index reads.
        slots_->remove(slot);
        if (Status s = store_->drop({{slot}}, Durability::buffered); !s.is_ok()) return fail(s);
        ++counters_.evicted_pages;
      }
      // The slot enters the index once the store holds its entry (before its data write).
      writes.push_back({slot, SlotEntry{file_id, page, dirty}});
      admitted.push_back(true);
      ++counters_.admitted_pages;
    }
    pieces.push_back(i);
  }
  // One FTL write per run of consecutive slots.
  std::size_t start = 0;
  while (start < writes.size()) {
    std::size_t stop = start + 1;
    while (stop < writes.size() && stop - start < kMaxStoreRunPages && writes[stop].slot == writes[stop - 1].slot + 1 &&
           pieces[stop] == pieces[stop - 1] + 1)
      ++stop;
    const auto run = static_cast<std::uint32_t>(stop - start);
    const std::span<const SlotWrite> batch(writes.data() + start, run);
    ConstByteSpan bytes = data.subspan(std::size_t{pieces[start]} * page_size_, std::size_t{run} * page_size_);
    std::vector<SlotIndex> run_slots;
    for (const SlotWrite& w : batch) run_slots.push_back(w.slot);
    if (Status s = store_->before_data_write(batch); !s.is_ok()) return fail(s);
    for (std::size_t w = start; w < stop; ++w)
      if (admitted[w]) slots_->insert(writes[w].slot);
    auto seq = ftl_.write(layout_.data_lpn(batch.front().slot), run, bytes);
    if (!seq.is_ok()) return fail(seq.status());
    if (uncommitted_since_ == 0) uncommitted_since_ = std::chrono::steady_clock::now().time_since_epoch().count();
    if (Status s = store_->after_data_write(run_slots, *seq); !s.is_ok()) return fail(s);
    store_->on_durable(ftl_.durable_seq());
    if (dirty)
      for (SlotIndex slot : run_slots) slots_->set_dirty(slot);
    start = stop;
    // Past the bound on unprotected writes the writer commits, however soon the committer would.
    if (commit_pending_pages_ != 0 && store_->unprotected_writes() >= commit_pending_pages_) FLASHDIR_TRY(commit_locked());
  }
  return handled;
}

Status EngineCore::drop_slots(const std::vector<SlotIndex>& slots) {
  if (slots.empty()) return Status::ok();
  // Out of the index first: it reads page numbers from the entries the store clears.
  slots_->remove(slots);
  if (Status s = store_->drop(slots, Durability::forced); !s.is_ok()) return fail(s);
  return Status::ok();
}

Status EngineCore::invalidate(std::uint64_t file_id, const std::vector<SlotIndex>& slots) {
  slots_->remove(slots);
  if (Status s = store_->invalidate_file(file_id, slots); !s.is_ok()) return fail(s);
  return Status::ok();
}

Status EngineCore::drop_stale(std::uint64_t file_id) {
  const auto stale = slots_->slots_of(file_id);
  FLASHDIR_TRY(invalidate(file_id, stale));
  if (!stale.empty()) ++counters_.stale_drops;
  return Status::ok();
}

Status EngineCore::drop_file_pages(std::uint64_t file_id, std::uint64_t from_page) {
  return drop_slots(slots_->slots_of(file_id, from_page));
}

Status EngineCore::drop_range(std::uint64_t file_id, std::uint64_t first_page, std::uint64_t last_page) {
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  std::vector<SlotIndex> covered;
  for (std::uint64_t page = first_page; page <= last_page; ++page)
    if (const auto slot = slots_->find(file_id, page)) covered.push_back(*slot);
  return drop_slots(covered);
}

bool EngineCore::promoted(std::uint64_t file_id, std::uint64_t page) {
  if (options_.promote_after_misses <= 1) return true;
  std::lock_guard cache(cache_mutex_);
  if (miss_counts_.size() >= options_.promotion_table_entries) miss_counts_.clear();
  std::uint32_t& misses = miss_counts_[SlotKey{file_id, page}];
  if (++misses < options_.promote_after_misses) {
    ++counters_.not_promoted_pages;
    return false;
  }
  miss_counts_.erase(SlotKey{file_id, page});
  return true;
}

// ---- stats ----

FtlStats EngineCore::ftl_stats() const {
  std::lock_guard lock(cache_mutex_);
  return ftl_.stats();
}

EngineStats EngineCore::stats() const {
  EngineStats s;
  s.read_requests = counters_.read_requests;
  s.read_hit_pages = counters_.read_hit_pages;
  s.read_miss_pages = counters_.read_miss_pages;
  s.read_ahead_pages = counters_.read_ahead_pages;
  s.write_requests = counters_.write_requests;
  s.written_pages = counters_.written_pages;
  s.admitted_pages = counters_.admitted_pages;
  s.cutoff_bypassed_pages = counters_.cutoff_bypassed_pages;
  s.not_promoted_pages = counters_.not_promoted_pages;
  s.evicted_pages = counters_.evicted_pages;
  s.corrupt_pages = counters_.corrupt_pages;
  s.stale_drops = counters_.stale_drops;
  s.renumbered_files = counters_.renumbered_files;
  s.backing_errors = counters_.backing_errors;
  s.written_back_pages = counters_.written_back_pages;
  s.delayed_write_backs = counters_.delayed_write_backs;
  s.writer_waits = counters_.writer_waits;
  s.commits = counters_.commits;
  s.restart = restart_;
  {
    std::shared_lock handles(handles_mutex_);
    s.open_files = handles_.size();
  }
  std::lock_guard cache(cache_mutex_);
  s.capacity_pages = slots_->capacity();
  s.cached_pages = slots_->used();
  s.restart.image_parts_damaged = store_->image_chunks_damaged() + slots_->image_tables_damaged();
  s.restart.image_slots_lost = store_->image_entries_lost();
  s.dirty_pages = slots_->dirty_count();
  s.unprotected_pages = store_->unprotected_writes();
  const MetadataCounters meta = store_->counters();
  s.metadata_writes = meta.metadata_writes;
  s.metadata_entries_written = meta.entries_written;
  s.ram_index_bytes = slots_->ram_bytes() + store_->ram_bytes();
  s.ram_bytes_per_cached_page =
      s.cached_pages == 0 ? 0 : static_cast<double>(s.ram_index_bytes) / static_cast<double>(s.cached_pages);
  return s;
}

}  // namespace flashdir::cache
