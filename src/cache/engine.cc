#include "flashdir/cache/engine.h"

#include <nlohmann/json.hpp>

#include "cache/engine_core.h"

namespace flashdir::cache {

double EngineStats::hit_ratio() const {
  const std::uint64_t looked_up = read_hit_pages + read_miss_pages;
  return looked_up == 0 ? 0.0 : static_cast<double>(read_hit_pages) / static_cast<double>(looked_up);
}

double EngineStats::metadata_writes_per_data_write() const {
  const std::uint64_t data_writes = admitted_pages + written_pages;
  return data_writes == 0 ? 0.0 : static_cast<double>(metadata_writes) / static_cast<double>(data_writes);
}

namespace {

// Every figure once, in the order a person reads them; the JSON uses the same names.
nlohmann::ordered_json stats_object(const EngineStats& s) {
  return {
      {"capacity_pages", s.capacity_pages},
      {"cached_pages", s.cached_pages},
      {"dirty_pages", s.dirty_pages},
      {"unprotected_pages", s.unprotected_pages},
      {"open_files", s.open_files},
      {"read_requests", s.read_requests},
      {"read_hit_pages", s.read_hit_pages},
      {"read_miss_pages", s.read_miss_pages},
      {"hit_ratio", s.hit_ratio()},
      {"read_ahead_pages", s.read_ahead_pages},
      {"write_requests", s.write_requests},
      {"written_pages", s.written_pages},
      {"admitted_pages", s.admitted_pages},
      {"cutoff_bypassed_pages", s.cutoff_bypassed_pages},
      {"not_promoted_pages", s.not_promoted_pages},
      {"evicted_pages", s.evicted_pages},
      {"written_back_pages", s.written_back_pages},
      {"delayed_write_backs", s.delayed_write_backs},
      {"writer_waits", s.writer_waits},
      {"commits", s.commits},
      {"corrupt_pages", s.corrupt_pages},
      {"stale_drops", s.stale_drops},
      {"renumbered_files", s.renumbered_files},
      {"backing_errors", s.backing_errors},
      {"metadata_writes", s.metadata_writes},
      {"metadata_entries_written", s.metadata_entries_written},
      {"metadata_writes_per_data_write", s.metadata_writes_per_data_write()},
      {"entries_per_metadata_write", s.metadata_writes == 0 ? 0.0
                                                            : static_cast<double>(s.metadata_entries_written) /
                                                                  static_cast<double>(s.metadata_writes)},
      {"ram_index_bytes", s.ram_index_bytes},
      {"ram_bytes_per_cached_page", s.ram_bytes_per_cached_page},
      {"restart_clean_shutdown", s.restart.clean_shutdown},
      {"restart_usable_slots", s.restart.usable_slots},
      {"restart_dropped_slots", s.restart.dropped_slots},
      {"restart_orphan_slots", s.restart.orphan_slots},
      {"restart_catalog_lost_files", s.restart.catalog_lost_files},
      {"restart_dirty_slots", s.restart.dirty_slots},
      {"restart_written_back_slots", s.restart.written_back_slots},
      {"restart_lost_dirty_slots", s.restart.lost_dirty_slots},
      {"restart_files_with_losses", s.restart.files_with_losses},
      {"restart_saved_dirty_slots", s.restart.saved_dirty_slots},
      {"restart_saved_files", s.restart.saved_files.size()},
      {"restart_usable_fraction", s.restart.usable_fraction},
      {"restart_seconds", s.restart.seconds},
      {"restart_from_image", s.restart.from_restart_image},
      {"restart_image_parts_damaged", s.restart.image_parts_damaged},
      {"restart_image_slots_lost", s.restart.image_slots_lost},
  };
}

}  // namespace

std::string stats_json(const EngineStats& stats) { return stats_object(stats).dump(); }

Result<std::unique_ptr<Engine>> Engine::open(Ftl& ftl, Catalog& catalog, BackingStore& backing,
                                             const EngineOptions& options, EngineServices services) {
  auto core = EngineCore::open(ftl, catalog, backing, options, services);
  if (!core.is_ok()) return core.status();
  return std::unique_ptr<Engine>(new Engine(std::move(core.value())));
}

Engine::Engine(std::unique_ptr<EngineCore> core) : core_(std::move(core)) {}
Engine::~Engine() = default;

Result<FileHandle> Engine::open_file(std::string_view relative_path) { return core_->open_file(relative_path, nullptr); }
Result<FileHandle> Engine::open_file(std::string_view relative_path, std::unique_ptr<BackingFile> file) {
  return core_->open_file(relative_path, std::move(file));
}
Result<FileHandle> Engine::open_file(std::string_view relative_path, std::unique_ptr<BackingFile> file,
                                     const BackingAttributes& attributes) {
  return core_->open_file(relative_path, std::move(file), attributes);
}
Result<std::size_t> Engine::read(FileHandle file, std::uint64_t offset, ByteSpan out, DeferredFill* later) {
  return core_->read(file, offset, out, later);
}
Result<std::size_t> Engine::write(FileHandle file, std::uint64_t offset, ConstByteSpan data) {
  return core_->write(file, offset, data);
}
Result<std::size_t> Engine::append(FileHandle file, ConstByteSpan data) { return core_->append(file, data); }
Status Engine::truncate(FileHandle file, std::uint64_t size_bytes) { return core_->truncate(file, size_bytes); }
Status Engine::fallocate(FileHandle file, int mode, std::uint64_t offset, std::uint64_t length) {
  return core_->fallocate(file, mode, offset, length);
}
Status Engine::renamed(std::string_view from, std::string_view to, RenameKind kind) {
  return core_->renamed(from, to, kind);
}
IdentityRule Engine::identity_rule() const { return core_->identity_rule(); }
Status Engine::stop(const Status& reason) { return core_->stop(reason); }
std::optional<Status> Engine::stopped() const { return core_->stopped(); }
std::vector<UnwrittenFile> Engine::files_with_unwritten_data() { return core_->files_with_unwritten_data(); }
bool Engine::holds_unwritten_data(FileHandle file) { return core_->holds_unwritten_data(file); }
Status Engine::unlinked(std::string_view relative_path) { return core_->unlinked(relative_path); }
Status Engine::fsync(FileHandle file) { return core_->fsync(file); }
Status Engine::write_back(FileHandle file) { return core_->write_back(file, true); }
Status Engine::write_back_keeping_error(FileHandle file) { return core_->write_back(file, false); }
Status Engine::bypass(FileHandle file) { return core_->bypass(file); }
Status Engine::write_back_at_close(FileHandle file) { return core_->write_back_at_close(file); }
Status Engine::write_back_closed(std::string_view relative_path, const BackingAttributes& attributes) {
  return core_->write_back_closed(relative_path, attributes);
}
bool Engine::delays_write_back() const { return core_->delays_write_back(); }
Status Engine::commit() { return core_->commit(); }
Result<std::uint64_t> Engine::size(FileHandle file) { return core_->size(file); }
Status Engine::release(FileHandle file) { return core_->release(file); }
Status Engine::rename(std::string_view from, std::string_view to) { return core_->rename(from, to); }
Status Engine::unlink(std::string_view relative_path) { return core_->unlink(relative_path); }
Status Engine::close() { return core_->close(); }
Result<std::vector<std::uint8_t>> Engine::save_restart_image(RestartImageWriter& parts) {
  return core_->save_restart_image(parts);
}
EngineStats Engine::stats() const { return core_->stats(); }
FtlStats Engine::ftl_stats() const { return core_->ftl_stats(); }

}  // namespace flashdir::cache
