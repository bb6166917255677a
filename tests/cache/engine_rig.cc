#include "engine_rig.h"

#include <catch2/catch.hpp>

#include "cache/meta/metadata_store.h"
#include "cache/restart_image.h"
#include "ftl/ftl_core.h"
#include "ftl/ram/ram_manager.h"
#include <algorithm>
#include <fstream>
#include <iterator>

namespace flashdir::testing {

EngineRig::EngineRig(cache::EngineOptions options, std::uint64_t blocks, format::RamPolicy ram,
                     std::uint64_t device_ram_bytes, Backend backend)
    : options_(options),
      backing_dir_(dir_ / "backing"),
      geometry_(small_ftl_geometry(blocks)),
      chip_(backend, geometry_),
      ftl_options_(small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy, ram)) {
  std::filesystem::create_directory(backing_dir_);
  ftl_options_.ram.budget_bytes = device_ram_bytes;
  auto ftl = Ftl::format(chip_.chip(), chip_.clock(), ftl_options_);
  REQUIRE(ftl.is_ok());
  ftl_ = std::move(ftl).value();
  auto catalog = Catalog::create(dir_ / "catalog");
  REQUIRE(catalog.is_ok());
  catalog_ = std::move(catalog).value();
  auto backing = cache::open_posix_backing_store(backing_dir_);
  REQUIRE(backing.is_ok());
  backing_ = make_faulty_backing_store(std::move(backing).value(), backing_faults_);
  lost_found_ = cache::lost_found_directory(lost_found_dir());
  const Status opened = open_engine();
  INFO(opened.to_string());
  REQUIRE(opened.is_ok());
}

EngineRig::~EngineRig() {
  if (engine_ != nullptr) static_cast<void>(engine_->close());
}

Status EngineRig::open_engine() {
  // Commits only when a test calls Engine::commit (or the bound on unprotected data is met):
  // what a cut keeps must not depend on timing, unless the test asked for it.
  cache::EngineOptions options = options_;
  if (!background_commits_) options.commit_interval_ms = 0;
  auto engine = cache::Engine::open(*ftl_, *catalog_, *backing_, options,
                                    cache::EngineServices{lost_found_.get(), &file_ids_, restart_image_});
  if (!engine.is_ok()) return engine.status();
  engine_ = std::move(engine).value();
  return Status::ok();
}

void EngineRig::put(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
  std::ofstream out(backing_dir_ / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

void EngineRig::append(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
  std::ofstream out(backing_dir_ / name, std::ios::binary | std::ios::app);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::vector<std::uint8_t> EngineRig::get(const std::string& name) const {
  std::ifstream in(backing_dir_ / name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> EngineRig::read_through(const std::string& name, std::uint64_t offset, std::size_t length) {
  auto file = engine_->open_file(name);
  INFO(file.status().to_string());
  REQUIRE(file.is_ok());
  std::vector<std::uint8_t> bytes(length);
  auto got = engine_->read(*file, offset, bytes);
  INFO(got.status().to_string());
  REQUIRE(got.is_ok());
  bytes.resize(*got);
  REQUIRE(engine_->release(*file).is_ok());
  return bytes;
}

std::vector<std::uint8_t> EngineRig::read_through_in_small_fills(const std::string& name, std::size_t length) {
  const std::size_t piece = std::size_t{geometry_.pages_per_block / 2} * page_size();
  std::vector<std::uint8_t> bytes(length);
  for (std::size_t at = (length - 1) / piece * piece;; at -= piece) {
    const std::vector<std::uint8_t> got = read_through(name, at, std::min(piece, length - at));
    std::copy(got.begin(), got.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at));
    if (at == 0) break;
  }
  return bytes;
}

void EngineRig::damage_slot(std::uint32_t slot) {
  auto layout = cache::SlotLayout::of(*ftl_, cache::EngineServices{}.slot_alignment);  // open_engine()'s
  REQUIRE(layout.is_ok());
  damage_lpn(layout->data_lpn(slot));
}

void EngineRig::damage_metadata_page(std::uint32_t page) { damage_lpn(Lpn(page)); }

void EngineRig::damage_lpn(Lpn lpn) {
  REQUIRE(ftl_->flush().is_ok());
  auto ppn = ftl_->core().ram().lookup(lpn, ftl::Access::internal);
  REQUIRE(ppn.is_ok());
  std::vector<std::uint8_t> data(geometry_.page_size_bytes), oob(geometry_.oob_size_bytes);
  REQUIRE(chip_.store().read_pages(Ppn(*ppn), 1, data, oob).is_ok());
  data[100] ^= 0x10;
  REQUIRE(chip_.store().write_pages(Ppn(*ppn), 1, data, oob).is_ok());
}

Status EngineRig::reopen_ftl(std::optional<FaultPlan> plan) {
  engine_.reset();
  ftl_.reset();
  faulty_.reset();
  chip_.reopen();
  if (plan) faulty_ = std::make_unique<FaultyChip>(chip_.chip(), *plan);
  NandChip& chip = faulty_ ? static_cast<NandChip&>(*faulty_) : chip_.chip();
  auto ftl = Ftl::open(chip, chip_.clock(), ftl_options_);
  if (!ftl.is_ok()) return ftl.status();
  ftl_ = std::move(ftl).value();
  return Status::ok();
}

Status EngineRig::power_cycle(std::optional<FaultPlan> plan) {
  FLASHDIR_TRY(reopen_ftl(plan));
  return open_engine();
}

Status EngineRig::power_cycle_cut_in_restart(std::uint64_t operations) {
  FLASHDIR_TRY(reopen_ftl(FaultPlan{}));
  faulty_->cut_at_operation(faulty_->operations() + operations);
  return open_engine();
}

Status EngineRig::commit_in_background() {
  background_commits_ = true;
  return restart();
}

Status EngineRig::restart() { return reopen_with(options_); }

Result<bool> EngineRig::restart_from_image(const std::function<void(const std::filesystem::path& image)>& edit) {
  FLASHDIR_TRY(engine_->close());
  const std::filesystem::path path = dir_ / "restart.img";
  auto writer = cache::RestartImageWriter::create(path);
  if (!writer.is_ok()) return writer.status();
  auto index = engine_->save_restart_image(**writer);
  if (!index.is_ok()) return index.status();
  FLASHDIR_TRY(close_and_reopen_ftl());
  const cache::RestartImageKey key{format::Uuid{}, ftl_->checkpoint_generation()};
  FLASHDIR_TRY((*writer)->finish(key, *index));
  if (edit) edit(path);
  auto image = cache::RestartImage::open(path, key);
  std::filesystem::remove(path);  // as MountedCache does: read through the descriptor it keeps
  if (image.is_ok()) restart_image_ = std::move(image).value();
  const Status opened = open_engine();
  restart_image_.reset();
  FLASHDIR_TRY(opened);
  return engine_->stats().restart.from_restart_image;
}

Status EngineRig::reopen_with(const cache::EngineOptions& options) {
  FLASHDIR_TRY(engine_->close());
  FLASHDIR_TRY(close_and_reopen_ftl());
  options_ = options;
  return open_engine();
}

Status EngineRig::close_and_reopen_ftl() {
  engine_.reset();
  FLASHDIR_TRY(ftl_->close());
  ftl_.reset();
  faulty_.reset();
  chip_.reopen();
  // Through a FaultyChip with nothing planned, so that a test can cut the power later.
  faulty_ = std::make_unique<FaultyChip>(chip_.chip(), FaultPlan{});
  auto ftl = Ftl::open(*faulty_, chip_.clock(), ftl_options_);
  if (!ftl.is_ok()) return ftl.status();
  ftl_ = std::move(ftl).value();
  return Status::ok();
}

Status EngineRig::use_renumbering_backing(bool claims_stable) {
  FLASHDIR_TRY(engine_->close());
  engine_.reset();
  auto backing = cache::open_posix_backing_store(backing_dir_);
  if (!backing.is_ok()) return backing.status();
  backing_ = make_faulty_backing_store(
      make_renumbering_backing_store(std::move(backing).value(), numbering_, claims_stable), backing_faults_);
  return open_engine();
}

Status EngineRig::edit_catalog(const std::function<void(const std::filesystem::path& catalog_dir)>& edit,
                               bool power_cut) {
  if (power_cut) {
    FLASHDIR_TRY(reopen_ftl(std::nullopt));
  } else {
    FLASHDIR_TRY(engine_->close());
    engine_.reset();
  }
  catalog_.reset();
  edit(dir_ / "catalog");
  auto catalog = Catalog::open(dir_ / "catalog", Catalog::Access::read_write);
  if (!catalog.is_ok()) return catalog.status();
  catalog_ = std::move(catalog).value();
  return open_engine();
}

Status EngineRig::reopen_over(const std::filesystem::path& other_backing) {
  FLASHDIR_TRY(engine_->close());
  engine_.reset();
  auto backing = cache::open_posix_backing_store(other_backing);
  if (!backing.is_ok()) return backing.status();
  backing_ = make_faulty_backing_store(std::move(backing).value(), backing_faults_);
  return open_engine();
}

cache::EngineOptions write_back_options(cache::MetadataScheme scheme) {
  cache::EngineOptions options;
  options.write_mode = cache::WriteMode::write_back;
  options.metadata = scheme;
  return options;
}

cache::EngineOptions streaming_in(std::uint64_t stream_pages, std::optional<std::uint64_t> piece_pages) {
  cache::EngineOptions options = write_back_options();
  const std::uint32_t page_size = EngineRig(options).page_size();
  options.write_back_stream_bytes = stream_pages * page_size;
  if (piece_pages) options.write_back_piece_bytes = *piece_pages * page_size;
  return options;
}

std::vector<std::uint8_t> pattern(std::uint64_t tag, std::size_t count, std::uint64_t first_offset) {
  std::vector<std::uint8_t> bytes(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t at = first_offset + i;
    bytes[i] = static_cast<std::uint8_t>((at * 131 + tag * 7 + (at >> 9) * 13) ^ (tag >> 3));
  }
  return bytes;
}

void apply(std::vector<std::uint8_t>& model, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  if (model.size() < offset + bytes.size()) model.resize(offset + bytes.size(), 0);
  std::copy(bytes.begin(), bytes.end(), model.begin() + static_cast<std::ptrdiff_t>(offset));
}

}  // namespace flashdir::testing
