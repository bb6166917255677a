#include "tools/cache_dir_engine.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <mutex>

#include "flashdir/cache/backing_store.h"
#include "flashdir/cache/lost_found.h"
#include "flashdir/nand/page_store.h"

namespace flashdir::testing {

std::vector<std::uint8_t> contents(int tag) {
  std::vector<std::uint8_t> bytes(kFileBytes);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + i / 4096 + tag * 31);
  return bytes;
}

CacheDir::CacheDir(int files, const std::string& mkfs_options) : dir_(tmp_ / "cache"), backing_(tmp_ / "backing") {
  const auto made = mkfs(quoted(dir_) + " --size 16M " + mkfs_options);
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  std::filesystem::create_directory(backing_);
  for (int i = 0; i < files; ++i) put(name(i), contents(i));
}

std::string CacheDir::name(int i) { return fmt::format("f{}", i); }

std::filesystem::path CacheDir::copy() const {
  const auto copied = tmp_ / "copy";
  std::filesystem::remove_all(copied);
  std::filesystem::copy(dir_, copied, std::filesystem::copy_options::recursive);
  return copied;
}

void CacheDir::put(const std::string& file, const std::vector<std::uint8_t>& bytes) const {
  std::ofstream out(backing_ / file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::vector<std::uint8_t> CacheDir::get(const std::string& file) const {
  std::ifstream in(backing_ / file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The superblock's file id limit, raised as MountedCache raises it: before the catalog gives
// out an id past it.
class DirEngine::FileIds final : public cache::FileIdLimit {
 public:
  FileIds(const std::filesystem::path& file, format::Superblock& superblock) : file_(file), superblock_(superblock) {}
  std::uint64_t limit() const override {
    std::lock_guard lock(mutex_);
    return superblock_.file_id_limit;
  }
  Result<std::uint64_t> raise(std::uint64_t id) override {
    std::lock_guard lock(mutex_);
    superblock_.file_id_limit = std::max(superblock_.file_id_limit, id + (1 << 16));
    FLASHDIR_TRY(update_superblock_file(file_, superblock_));
    return superblock_.file_id_limit;
  }

 private:
  const std::filesystem::path file_;
  format::Superblock& superblock_;
  mutable std::mutex mutex_;
};

DirEngine::DirEngine(const CacheDir& cache, cache::EngineOptions options)
    : DirEngine(cache.dir(), cache.backing(), options) {}

DirEngine::DirEngine(const std::filesystem::path& cache_dir, const std::filesystem::path& backing_dir,
                     cache::EngineOptions options)
    : paths_(cache_dir) {
  auto sb = read_superblock_file(paths_.superblock);
  REQUIRE(sb.is_ok());
  superblock_ = sb->superblock;
  superblock_.clean_shutdown = false;
  REQUIRE(update_superblock_file(paths_.superblock, superblock_).is_ok());
  auto image = open_image_store(paths_.image, ImageAccess::read_write);
  REQUIRE(image.is_ok());
  chip_ = std::make_unique<SimulatedChip>(image.value(), LatencyProfile::of(LatencyPreset::zero), clock_);
  auto ftl = Ftl::open(*chip_, clock_, ftl_options(superblock_));
  REQUIRE(ftl.is_ok());
  ftl_ = std::move(ftl).value();
  auto catalog = Catalog::open(paths_.catalog, Catalog::Access::read_write);
  INFO(catalog.status().to_string());
  REQUIRE(catalog.is_ok());
  catalog_ = std::move(catalog).value();
  auto backing = cache::open_posix_backing_store(backing_dir);
  REQUIRE(backing.is_ok());
  backing_ = std::move(backing).value();
  lost_found_ = cache::lost_found_directory(paths_.dir / kLostFoundDirName);
  file_ids_ = std::make_unique<FileIds>(paths_.superblock, superblock_);
  auto engine =
      cache::Engine::open(*ftl_, *catalog_, *backing_, options,
                          cache::EngineServices{lost_found_.get(), file_ids_.get(), nullptr, superblock_.slot_alignment});
  INFO(engine.status().to_string());
  REQUIRE(engine.is_ok());
  engine_ = std::move(engine).value();
}

DirEngine::~DirEngine() { engine_.reset(); }

std::vector<std::uint8_t> DirEngine::read(const std::string& file) {
  auto handle = engine_->open_file(file);
  INFO(handle.status().to_string());
  REQUIRE(handle.is_ok());
  std::vector<std::uint8_t> bytes(kFileBytes + 4096);
  auto got = engine_->read(*handle, 0, bytes);
  INFO(got.status().to_string());
  REQUIRE(got.is_ok());
  bytes.resize(*got);
  REQUIRE(engine_->release(*handle).is_ok());
  return bytes;
}

void DirEngine::write_synced(const std::string& file, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  auto handle = engine_->open_file(file);
  REQUIRE(handle.is_ok());
  REQUIRE(engine_->write(*handle, offset, bytes).is_ok());
  REQUIRE(engine_->fsync(*handle).is_ok());
}

void DirEngine::close() {
  close_engine();
  close_ftl();
}

void DirEngine::close_engine() { REQUIRE(engine_->close().is_ok()); }

void DirEngine::close_ftl() {
  REQUIRE(ftl_->close().is_ok());
  superblock_.clean_shutdown = true;
  REQUIRE(update_superblock_file(paths_.superblock, superblock_).is_ok());
}

void fill(const CacheDir& cache, int files) {
  DirEngine engine(cache);
  for (int i = 0; i < files; ++i) REQUIRE(engine.read(CacheDir::name(i)) == cache.get(CacheDir::name(i)));
  engine.close();
}

std::uint64_t cached_pages(const CacheDir& cache) {
  DirEngine engine(cache);
  const std::uint64_t pages = engine.engine().stats().cached_pages;
  engine.close();
  return pages;
}

std::unique_ptr<cache::MountedCache> open_as_daemon(const CacheDir& cache) {
  auto backing = cache::open_posix_backing_store(cache.backing());
  REQUIRE(backing.is_ok());
  auto mounted = cache::MountedCache::open(cache.dir(), std::move(backing.value()), cache::EngineOptions{});
  INFO(mounted.status().to_string());
  REQUIRE(mounted.is_ok());
  return std::move(mounted).value();
}

CommandResult checked(const std::string& args, int expected_exit) {
  auto result = fsck(args);
  INFO(args << "\n" << result.output);
  CHECK(result.exit_code == expected_exit);
  return result;
}

std::uint64_t page_holding(const CacheDir& cache, std::uint64_t lpn) {
  auto store = open_image_store(CacheDirPaths(cache.dir()).image, ImageAccess::read_only);
  REQUIRE(store.is_ok());
  const Geometry& g = (*store)->geometry();
  std::vector<std::uint8_t> oob(g.oob_size_bytes);
  std::uint64_t found = g.page_count();
  std::uint64_t newest = 0;
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    for (std::uint32_t i = 0; i < (*store)->block_state(BlockNumber(b)).next_page; ++i) {
      const Ppn page = g.page_at(BlockNumber(b), i);
      REQUIRE((*store)->read_pages(page, 1, {}, oob).is_ok());
      auto record = format::decode_oob(oob);
      if (record.is_ok() && record->kind == format::PageKind::data && record->logical_number == lpn &&
          record->sequence >= newest) {
        newest = record->sequence;
        found = page.value;
      }
    }
  }
  REQUIRE(found < g.page_count());
  return found;
}

void flip_data_byte(const CacheDir& cache, std::uint64_t page) {
  const CacheDirPaths paths(cache.dir());
  const Geometry g = read_superblock_file(paths.superblock)->superblock.geometry;
  std::fstream image(paths.image, std::ios::in | std::ios::out | std::ios::binary);
  const auto offset = static_cast<std::streamoff>(format::image_layout(g).data_offset + page * g.page_size_bytes + 400);
  image.seekg(offset);
  char byte = 0;
  image.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x08);
  image.seekp(offset);
  image.write(&byte, 1);
  REQUIRE(image.good());
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace flashdir::testing
