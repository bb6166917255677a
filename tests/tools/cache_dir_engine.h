// A cache directory made by mkfs, a backing directory of small files, and the cache engine over
// them put together as MountedCache does it, for the fsck tests to fill, cut the power under,
// damage, repair and read back.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "flashdir/cache/engine.h"
#include "flashdir/cache_dir.h"
#include "flashdir/catalog.h"
#include "flashdir/clock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/simulated_chip.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace flashdir::testing {

inline constexpr std::size_t kFileBytes = 40 * 4096 + 1000;  // 41 pages, the last one partial

// The bytes of backing file number `tag`.
std::vector<std::uint8_t> contents(int tag);

// A cache directory made by mkfs and a backing directory of `files` files named f0, f1, ...
class CacheDir {
 public:
  explicit CacheDir(int files = 4, const std::string& mkfs_options = "");

  static std::string name(int i);
  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& backing() const { return backing_; }
  std::string arg() const { return quoted(dir_); }
  // A copy of the cache directory beside it (the catalog closed), for an engine to open as an oracle.
  std::filesystem::path copy() const;

  void put(const std::string& file, const std::vector<std::uint8_t>& bytes) const;
  std::vector<std::uint8_t> get(const std::string& file) const;

 private:
  TempDir tmp_;
  std::filesystem::path dir_;
  std::filesystem::path backing_;
};

// The engine over a cache directory, put together as MountedCache does it (superblock flag
// down, FTL, catalog, the superblock's file id limit, lost+found, engine), so that a test can
// close it cleanly or abandon it: a power cut, in which the device RAM and every write still in
// it are lost.
class DirEngine {
 public:
  explicit DirEngine(const CacheDir& cache, cache::EngineOptions options = {});
  DirEngine(const std::filesystem::path& cache_dir, const std::filesystem::path& backing_dir,
            cache::EngineOptions options = {});
  // Without close(): a power cut. The engine goes first (it stops its flusher), writing nothing.
  ~DirEngine();

  cache::Engine& engine() { return *engine_; }
  Ftl& ftl() { return *ftl_; }

  // The whole file through the engine.
  std::vector<std::uint8_t> read(const std::string& file);
  // Writes `bytes` at `offset` of `file` and fsyncs: durable in the cache only (write-back).
  void write_synced(const std::string& file, std::uint64_t offset, const std::vector<std::uint8_t>& bytes);

  void close();
  // A clean close in two steps, for a test that writes to the FTL in between.
  void close_engine();
  void close_ftl();

 private:
  class FileIds;
  CacheDirPaths paths_;
  format::Superblock superblock_;
  SimClock clock_;
  std::unique_ptr<SimulatedChip> chip_;
  std::unique_ptr<Ftl> ftl_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<cache::BackingStore> backing_;
  std::unique_ptr<cache::LostFound> lost_found_;
  std::unique_ptr<FileIds> file_ids_;
  std::unique_ptr<cache::Engine> engine_;
};

// Every file read through the engine (cached), then a clean close.
void fill(const CacheDir& cache, int files);
// The cache opened as the daemon opens it (MountedCache, default engine options), over its
// backing directory; the test fails if it does not open.
std::unique_ptr<cache::MountedCache> open_as_daemon(const CacheDir& cache);
// The engine's figure for cached pages after a clean open (what fsck calls usable).
std::uint64_t cached_pages(const CacheDir& cache);
// fsck with `args`, checked to exit with `expected_exit` (its output in the failure message).
CommandResult checked(const std::string& args, int expected_exit);
// The chip page holding the newest copy of `lpn`, from the OOB records.
std::uint64_t page_holding(const CacheDir& cache, std::uint64_t lpn);
// Flips one bit in the data of chip page `page`: its OOB record still verifies, its data not.
void flip_data_byte(const CacheDir& cache, std::uint64_t page);
std::string file_bytes(const std::filesystem::path& path);

}  // namespace flashdir::testing
