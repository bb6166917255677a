// An engine over a small FTL on a memory chip (or another backend), a catalog and a backing
// directory in a temporary directory, with the means to power-cycle it (the chip loses its RAM,
// the engine is dropped without closing) and to reopen it cleanly.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "faulty_backing.h"
#include "renumbering_backing.h"
#include "flashdir/cache/engine.h"
#include "flashdir/nand/faulty_chip.h"
#include "ftl/ftl_harness.h"
#include "support/temp_dir.h"
#include "support/test_chip.h"

namespace flashdir::testing {

class EngineRig {
 public:
  // The engine never commits in the background (commit_interval_ms is taken as 0) unless a
  // test calls commit_in_background(): tests call Engine::commit where they want one.
  explicit EngineRig(cache::EngineOptions options = {}, std::uint64_t blocks = 64,
                     format::RamPolicy ram = format::RamPolicy::tree, std::uint64_t device_ram_bytes = 4096,
                     Backend backend = Backend::memory);
  ~EngineRig();

  cache::Engine& engine() { return *engine_; }
  std::uint32_t page_size() const { return geometry_.page_size_bytes; }
  std::filesystem::path backing_path(const std::string& name) const { return backing_dir_ / name; }
  // The backing store's injected failures and latency (none until a test sets them).
  BackingFaults& backing_faults() { return *backing_faults_; }

  // Files in the backing directory, written and read behind the engine's back.
  void put(const std::string& name, const std::vector<std::uint8_t>& bytes) const;
  void append(const std::string& name, const std::vector<std::uint8_t>& bytes) const;
  std::vector<std::uint8_t> get(const std::string& name) const;

  // Opens `name` through the engine, reads [offset, offset + length) and releases it.
  std::vector<std::uint8_t> read_through(const std::string& name, std::uint64_t offset, std::size_t length);
  // The first `length` bytes (at least 1) of `name`, read through the engine half a block at a
  // time, last piece first, each by an open of its own: a read at the file's start is the only
  // one with read-ahead, and what it would read ahead is cached by then. So every fill is of at
  // most half a block, which the FTL keeps in the device RAM (a larger write it programs at
  // once) until a commit or the RAM's own eviction programs it.
  std::vector<std::uint8_t> read_through_in_small_fills(const std::string& name, std::size_t length);

  // Flips one bit of the data of the page slot `slot` holds, in the medium (after a flush, so
  // that the page is on the chip): every read of it fails verification.
  void damage_slot(std::uint32_t slot);
  // The same for metadata page `page` (LPN `page`): the restart finds it damaged.
  void damage_metadata_page(std::uint32_t page);
  // A power cut: the engine and FTL are dropped with whatever RAM they had; everything reopens,
  // through a FaultyChip that follows `plan` if one is given (to cut the engine's next run).
  Status power_cycle(std::optional<FaultPlan> plan = std::nullopt);
  // A power cut, then a restart that is itself cut `operations` chip operations into the
  // engine's part of it (after the FTL's recovery: the metadata store's repairs and trims, the
  // write-back of dirty pages, the drops). Returns the restart's status (ok if it needed fewer).
  Status power_cycle_cut_in_restart(std::uint64_t operations);
  bool power_lost() const { return faulty_ != nullptr && faulty_->power_lost(); }
  // Cuts the power at the chip operation `skipped` operations from now, the next one by default
  // (the rig must run over a FaultyChip: after a power_cycle with a plan, FaultPlan{} for none).
  void cut_at_next_chip_operation(std::uint64_t skipped = 0) {
    faulty_->cut_at_operation(faulty_->operations() + skipped);
  }
  // A clean close and a reopen whose engine (and every later one) commits in the background
  // every commit_interval_ms of the rig's options.
  Status commit_in_background();
  // A clean close and reopen.
  Status restart();
  // A clean close and a reopen given the restart image the close leaves (Engine::
  // save_restart_image, in the rig's directory), after `edit` (if any) changed the file;
  // whether the engine took it. An image whose index does not open is not given.
  Result<bool> restart_from_image(const std::function<void(const std::filesystem::path& image)>& edit = {});
  Status reopen_with(const cache::EngineOptions& options);
  // A clean close, and a reopen over a backing store that numbers inodes as it meets paths
  // (renumber_inodes() starts a new session), saying its numbers are stable or not.
  Status use_renumbering_backing(bool claims_stable);
  void renumber_inodes() { numbering_->new_session(); }
  // A clean close, and a reopen over another backing directory (refused by the engine).
  Status reopen_over(const std::filesystem::path& other_backing);
  // A clean close (or with `power_cut`, a power cut) with the catalog closed too, `edit` run on
  // the catalog's directory (to put back an older copy, or lose it all), and a reopen.
  Status edit_catalog(const std::function<void(const std::filesystem::path& catalog_dir)>& edit,
                      bool power_cut = false);
  // Where the engine saves dirty pages its restart could not prove belong to their file.
  std::filesystem::path lost_found_dir() const { return dir_ / "lost+found"; }
  std::filesystem::path scratch_dir() const { return dir_.path(); }

 private:
  Status open_engine();
  // After the engine's close: the engine dropped, the FTL closed and opened again (over a
  // FaultyChip that plans nothing).
  Status close_and_reopen_ftl();
  // Flips a bit of the page `lpn` maps to, in the medium (after a flush).
  void damage_lpn(Lpn lpn);
  // Drops the engine and FTL without closing, and opens the FTL again over a fresh view of
  // the chip (through a FaultyChip following `plan`, if one is given).
  Status reopen_ftl(std::optional<FaultPlan> plan);

  cache::EngineOptions options_;
  bool background_commits_ = false;
  std::shared_ptr<const cache::RestartImage> restart_image_;  // for open_engine, during restart_from_image
  TempDir dir_;
  std::filesystem::path backing_dir_;
  Geometry geometry_;
  TestChip chip_;
  std::unique_ptr<FaultyChip> faulty_;
  FtlOptions ftl_options_;
  std::unique_ptr<Ftl> ftl_;
  std::unique_ptr<Catalog> catalog_;
  std::shared_ptr<BackingFaults> backing_faults_ = std::make_shared<BackingFaults>();
  std::unique_ptr<cache::BackingStore> backing_;
  std::shared_ptr<InodeNumbering> numbering_ = std::make_shared<InodeNumbering>();
  std::unique_ptr<cache::LostFound> lost_found_;
  // The durable file id limit, as the superblock keeps it for a mounted cache (it survives the
  // rig's power cuts and reopens).
  struct FileIds final : cache::FileIdLimit {
    std::uint64_t value = 0;
    std::uint64_t limit() const override { return value; }
    Result<std::uint64_t> raise(std::uint64_t id) override { return value = std::max(value, id + 16); }
  } file_ids_;
  std::unique_ptr<cache::Engine> engine_;
};

// Engine options for write-back with `scheme`.
cache::EngineOptions write_back_options(cache::MetadataScheme scheme = cache::MetadataScheme::lufuw);
// Write-back whose sequential streams go back `stream_pages` pages at a time, and whose
// flusher writes pieces of at least `piece_pages` pages (unset: the default).
cache::EngineOptions streaming_in(std::uint64_t stream_pages, std::optional<std::uint64_t> piece_pages = std::nullopt);

// `count` bytes of a pattern that names `tag` and each byte's offset: no two tags agree.
std::vector<std::uint8_t> pattern(std::uint64_t tag, std::size_t count, std::uint64_t first_offset = 0);

// Writes `bytes` at `offset` into `model`, growing it with zeros as a file would.
void apply(std::vector<std::uint8_t>& model, std::uint64_t offset, const std::vector<std::uint8_t>& bytes);

}  // namespace flashdir::testing
