// A cache directory opened for the engine: the same checks and order as every tool (the
// superblock, the image against it, the clean flag down before anything changes), then the
// FTL, the catalog and the engine; closed in the reverse order with the clean flag last.
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <chrono>

#include "flashdir/nand/faulty_chip.h"
#include "cache/restart_image.h"
#include "flashdir/cache/engine.h"
#include "flashdir/file_io.h"
#include "flashdir/cache_dir.h"
#include "flashdir/clock.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/real_time_chip.h"
#include "flashdir/nand/simulated_chip.h"

namespace flashdir::cache {
namespace {

// File ids the superblock reserves at a time: one superblock write per this many new files.
constexpr std::uint64_t kFileIdStep = 1 << 16;

// The file id limit kept in the superblock file (format.h): raised, and written (both slots in
// turn, synced), before the catalog gives out an id past it.
class SuperblockFileIds final : public FileIdLimit {
 public:
  SuperblockFileIds(const std::filesystem::path& file, format::Superblock& superblock)
      : file_(file), superblock_(superblock) {}
  std::uint64_t limit() const override {
    std::lock_guard lock(mutex_);
    return superblock_.file_id_limit;
  }
  Result<std::uint64_t> raise(std::uint64_t id) override {
    std::lock_guard lock(mutex_);
    superblock_.file_id_limit = std::max(superblock_.file_id_limit, id + kFileIdStep);
    FLASHDIR_TRY(update_superblock_file(file_, superblock_));
    return superblock_.file_id_limit;
  }

 private:
  const std::filesystem::path file_;
  format::Superblock& superblock_;  // the cache's; its other fields change only while no id is given out
  mutable std::mutex mutex_;
};

// The catalog must be this cache's: mkfs put a copy of the superblock in it. One with another
// uuid belongs to another cache (its records name other files); one without a copy lost it,
// and its records are no more trusted than the engine checks them (EngineCore::open).
Status check_catalog_belongs(Catalog& catalog, const format::Superblock& superblock, const std::filesystem::path& dir) {
  auto copy = catalog.superblock_copy();
  if (copy.is_ok()) {
    if (copy->uuid == superblock.uuid) return Status::ok();
    return Status::corruption(fmt::format(
        "the catalog in {} belongs to another cache (uuid {}, the superblock's is {}): put back this cache's "
        "catalog, or run fsck.flashdir -y {} to empty the cache",
        (dir / "catalog").string(), copy->uuid.to_string(), superblock.uuid.to_string(), dir.string()));
  }
  if (copy.status().code() != StatusCode::not_found) return copy.status();
  spdlog::error("the catalog in {} lost its copy of the superblock (and perhaps more records): files it does not "
                "know are never served",
                (dir / "catalog").string());
  return catalog.put_superblock_copy(superblock);
}

// The restart image the last clean close saved, if the chip is as it left it: the superblock
// said clean and the FTL opened clean at the checkpoint generation the image was saved with.
// The file goes (durably) before anything changes the cache, whether it is used or not: a
// later open must never meet a copy of a state the cache has left.
Result<std::shared_ptr<const RestartImage>> take_restart_image(const CacheDirPaths& paths, const format::Uuid& uuid,
                                                               bool closed_cleanly, const Ftl& ftl) {
  std::shared_ptr<const RestartImage> image;
  if (closed_cleanly && ftl.recovery().clean) {
    auto opened = RestartImage::open(paths.restart_image, {uuid, ftl.checkpoint_generation()});
    if (opened.is_ok()) {
      image = std::move(opened).value();
    } else if (opened.status().code() != StatusCode::not_found) {
      spdlog::warn("the restart image {} is not used: {}", paths.restart_image.string(), opened.status().message());
    }
  }
  // Unlinked whether used or not; an image in use is read through the descriptor it keeps.
  bool removed = false;
  for (const std::filesystem::path& file : {paths.restart_image, restart_image_temporary(paths.restart_image)}) {
    if (::unlink(file.c_str()) == 0) {
      removed = true;
    } else if (errno != ENOENT) {
      return errno_status("removing " + file.string());
    }
  }
  if (removed) FLASHDIR_TRY(sync_directory(paths.dir));
  return image;
}

// How the FTL opened, for the log: clean, or rolled forward (and how).
std::string recovery_summary(const RecoveryReport& recovery) {
  if (recovery.clean) return "clean";
  return fmt::format("rolled forward over {} blocks, {}", recovery.scanned_blocks,
                     recovery.moved_forward ? "from the checkpoint's block table" : "rebuilt from the whole mapping");
}

}  // namespace

struct MountedCache::Parts {
  CacheDirPaths paths;
  format::Superblock superblock;
  std::unique_ptr<BackingStore> backing;
  std::shared_ptr<PageStore> image;
  SimClock clock;
  std::unique_ptr<SimulatedChip> chip;
  std::unique_ptr<RealTimeChip> real_time_chip;  // ChipTiming::real_time: wraps `chip`
  std::unique_ptr<FaultyChip> faulty_chip;       // ChipFaults::cut_on_request: wraps the above
  std::unique_ptr<Ftl> ftl;
  std::unique_ptr<Catalog> catalog;
  std::unique_ptr<LostFound> lost_found;
  std::unique_ptr<SuperblockFileIds> file_ids;
  bool closed = false;

  explicit Parts(const std::filesystem::path& dir) : paths(dir) {}
};

Result<std::unique_ptr<MountedCache>> MountedCache::open(const std::filesystem::path& cache_dir,
                                                         std::unique_ptr<BackingStore> backing,
                                                         const EngineOptions& options,
                                                         std::optional<FtlOptions> ftl_choice,
                                                         ChipTiming timing, ChipFaults faults) {
  const auto started = std::chrono::steady_clock::now();
  auto lap = [last = started]() mutable {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    return seconds;
  };
  auto parts = std::make_unique<Parts>(cache_dir);
  parts->backing = std::move(backing);
  auto sb = read_superblock_file(parts->paths.superblock);
  if (!sb.is_ok()) return sb.status();
  parts->superblock = sb->superblock;
  auto header = read_image_header(parts->paths.image);
  if (!header.is_ok()) return header.status();
  FLASHDIR_TRY(check_image_matches(parts->paths.image, header.value(), parts->superblock));
  auto image = open_image_store(parts->paths.image, ImageAccess::read_write);
  if (!image.is_ok()) return image.status();
  parts->image = std::move(image.value());
  auto catalog = Catalog::open(parts->paths.catalog, Catalog::Access::read_write);
  if (!catalog.is_ok()) return catalog.status();
  parts->catalog = std::move(catalog.value());
  const double catalog_seconds = lap();
  FLASHDIR_TRY(check_catalog_belongs(*parts->catalog, parts->superblock, cache_dir));

  const bool closed_cleanly = parts->superblock.clean_shutdown;
  parts->superblock.clean_shutdown = false;
  FLASHDIR_TRY(update_superblock_file(parts->paths.superblock, parts->superblock));
  parts->chip = std::make_unique<SimulatedChip>(parts->image, parts->superblock.latency, parts->clock);
  NandChip* chip = parts->chip.get();
  if (timing == ChipTiming::real_time) {
    parts->real_time_chip = std::make_unique<RealTimeChip>(*parts->chip, parts->clock);
    chip = parts->real_time_chip.get();
  }
  if (faults == ChipFaults::cut_on_request) {
    FaultPlan plan;
    plan.in_flight = InFlight::torn;
    parts->faulty_chip = std::make_unique<FaultyChip>(*chip, plan);
    chip = parts->faulty_chip.get();
  }
  const double before_ftl_seconds = lap();
  auto ftl = Ftl::open(*chip, parts->clock, ftl_choice.value_or(ftl_options(parts->superblock)));
  if (!ftl.is_ok()) return ftl.status();
  parts->ftl = std::move(ftl.value());
  const double ftl_seconds = lap();
  parts->lost_found = lost_found_directory(parts->paths.dir / kLostFoundDirName);
  parts->file_ids = std::make_unique<SuperblockFileIds>(parts->paths.superblock, parts->superblock);
  auto restart_image = take_restart_image(parts->paths, parts->superblock.uuid, closed_cleanly, *parts->ftl);
  if (!restart_image.is_ok()) return restart_image.status();
  auto engine = Engine::open(*parts->ftl, *parts->catalog, *parts->backing, options,
                             EngineServices{parts->lost_found.get(), parts->file_ids.get(),
                                            std::move(restart_image).value(), parts->superblock.slot_alignment});
  if (!engine.is_ok()) return engine.status();
  // Wall time of each part of the open (the FTL's own steps are in simulated chip time).
  spdlog::info("cache open: catalog {:.3f} s, checks {:.3f} s, FTL {:.3f} s ({}), engine {:.3f} s", catalog_seconds,
               before_ftl_seconds, ftl_seconds,
               recovery_summary(parts->ftl->recovery()),
               lap());
  return std::unique_ptr<MountedCache>(new MountedCache(std::move(parts), std::move(engine.value())));
}

MountedCache::MountedCache(std::unique_ptr<Parts> parts, std::unique_ptr<Engine> engine)
    : parts_(std::move(parts)), engine_(std::move(engine)) {}

MountedCache::~MountedCache() {
  // A stopped engine cannot close: the cache is left as a power cut leaves it, for the next open.
  if (parts_->closed || engine_->stopped()) return;
  if (Status s = close(); !s.is_ok()) spdlog::error("closing the cache {}: {}", parts_->paths.dir.string(), s.to_string());
}

Ftl& MountedCache::ftl() { return *parts_->ftl; }

Status MountedCache::cut_power_at_next_program() {
  if (parts_->faulty_chip == nullptr)
    return Status::invalid_argument("the cache was opened without power_cut_control");
  spdlog::warn("power_cut_control: the chip loses power at its next program");
  parts_->faulty_chip->cut_at_next_program();
  return Status::ok();
}

Status MountedCache::close() {
  parts_->closed = true;
  FLASHDIR_TRY(engine_->close());
  // The image's parts before the FTL's close, its header (naming the checkpoint that close
  // writes) after it, and both before the clean flag: a cut between leaves an image no open
  // trusts without it.
  auto writer = RestartImageWriter::create(parts_->paths.restart_image);
  Result<std::vector<std::uint8_t>> index =
      writer.is_ok() ? engine_->save_restart_image(**writer) : Result<std::vector<std::uint8_t>>(writer.status());
  FLASHDIR_TRY(parts_->ftl->close());
  Status saved = index.status();
  if (saved.is_ok()) saved = (*writer)->finish({parts_->superblock.uuid, parts_->ftl->checkpoint_generation()}, *index);
  if (!saved.is_ok()) {
    spdlog::warn("no restart image saved ({}): the next open reads every metadata page", saved.to_string());
  }
  parts_->superblock.clean_shutdown = true;
  return update_superblock_file(parts_->paths.superblock, parts_->superblock);
}

}  // namespace flashdir::cache
