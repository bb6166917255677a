#include "tools/cache_chip.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "flashdir/file_io.h"
#include "flashdir/nand/faulty_chip.h"
#include "support/test_chip.h"

namespace flashdir::testing {

void flip_byte(const std::filesystem::path& path, std::uint64_t offset) {
  UniqueFd fd(::open(path.c_str(), O_RDWR));
  REQUIRE(fd.valid());
  std::uint8_t byte = 0;
  REQUIRE(pread_exact(fd.get(), ByteSpan(&byte, 1), offset, "test").is_ok());
  byte ^= 0x40;
  REQUIRE(pwrite_all(fd.get(), ConstByteSpan(&byte, 1), offset, "test").is_ok());
}

CacheChip::CacheChip(const std::filesystem::path& dir, ImageAccess access)
    : store(open_image_store(CacheDirPaths(dir).image, access).value()),
      chip(store, LatencyProfile::of(LatencyPreset::zero), clock) {}

FtlOptions options_of(const std::filesystem::path& dir, std::uint64_t ram_budget_bytes) {
  FtlOptions options = ftl_options(read_superblock_file(CacheDirPaths(dir).superblock)->superblock);
  options.ram.budget_bytes = ram_budget_bytes;
  return options;
}

void write_through_ftl(const std::filesystem::path& dir, std::uint64_t requests, std::uint64_t cut_at) {
  CacheChip cache(dir, ImageAccess::read_write);
  FaultPlan plan;
  plan.cut_at_operation = cut_at;
  plan.in_flight = InFlight::torn;
  FaultyChip faulty(cache.chip, plan);
  auto ftl = Ftl::open(faulty, cache.clock, options_of(dir, kSmallRamBytes));
  REQUIRE(ftl.is_ok());
  SeededRandom random(3);
  std::vector<std::uint8_t> data(4 * cache.chip.geometry().page_size_bytes);
  for (std::uint64_t r = 0; r < requests && !faulty.power_lost(); ++r) {
    for (auto& byte : data) byte = static_cast<std::uint8_t>(random.next_u64());
    (void)(*ftl)->write(Lpn(random.uniform(2000)), 4, data);  // fails once the power is gone
  }
  if (!faulty.power_lost()) REQUIRE((*ftl)->close().is_ok());
}

void recover_and_close(const std::filesystem::path& dir) {
  CacheChip cache(dir, ImageAccess::read_write);
  auto ftl = Ftl::open(cache.chip, cache.clock, options_of(dir, kSmallRamBytes));
  REQUIRE(ftl.is_ok());
  REQUIRE_FALSE((*ftl)->recovery().clean);
  REQUIRE((*ftl)->close().is_ok());
}

std::map<std::uint64_t, format::OobRecord> records_of(const std::filesystem::path& dir) {
  CacheChip cache(dir);
  const Geometry& g = cache.chip.geometry();
  std::map<std::uint64_t, format::OobRecord> records;
  std::vector<std::uint8_t> oob(g.oob_size_bytes);
  for (std::uint64_t p = 0; p < g.page_count(); ++p) {
    if (!cache.chip.is_programmed(Ppn(p))) continue;
    REQUIRE(cache.chip.read(Ppn(p), 1, {}, oob).is_ok());
    if (auto record = format::decode_oob(oob); record.is_ok()) records.emplace(p, record.value());
  }
  return records;
}

std::uint64_t stale_page_inside_a_block(const std::filesystem::path& dir) {
  const auto records = records_of(dir);
  std::map<std::uint64_t, std::uint64_t> newest;  // LPN -> page
  for (const auto& [page, record] : records) {
    if (record.kind != format::PageKind::data) continue;
    auto [it, inserted] = newest.emplace(record.logical_number, page);
    const format::OobRecord& held = records.at(it->second);
    const bool newer = std::pair(record.version, record.sequence) > std::pair(held.version, held.sequence);
    if (!inserted && newer) it->second = page;
  }
  CacheChip cache(dir);
  const Geometry& g = cache.chip.geometry();
  for (const auto& [page, record] : records) {
    const bool last = g.page_in_block(Ppn(page)) + 1 == cache.chip.next_page(g.block_of(Ppn(page)));
    if (record.kind == format::PageKind::data && newest.at(record.logical_number) != page && !last) return page;
  }
  FAIL("no stale page inside a block");
  return 0;
}

void damage_record(const std::filesystem::path& dir, std::uint64_t page) {
  const format::Superblock sb = read_superblock_file(CacheDirPaths(dir).superblock)->superblock;
  flip_byte(CacheDirPaths(dir).image,
            format::image_layout(sb.geometry).oob_offset + page * sb.geometry.oob_size_bytes + 8);
}

void interrupt_erase(const std::filesystem::path& dir, BlockNumber block) {
  CacheChip cache(dir, ImageAccess::read_write);
  for (std::uint64_t seed = 1;; ++seed) {
    FaultPlan plan;
    plan.seed = seed;
    plan.cut_at_operation = 0;
    plan.in_flight = InFlight::torn;
    FaultyChip faulty(cache.chip, plan);
    REQUIRE(faulty.erase(block).code() == StatusCode::power_lost);
    if (faulty.cut().torn_garbage_pages >= 2) return;
  }
}

std::vector<BlockNumber> erased_blocks(const std::filesystem::path& dir) {
  CacheChip cache(dir);
  std::vector<BlockNumber> blocks;
  for (std::uint64_t b = cache.chip.geometry().block_count; b-- > 0;) {
    if (cache.chip.next_page(BlockNumber(b)) == 0) blocks.emplace_back(b);
  }
  return blocks;
}

}  // namespace flashdir::testing
