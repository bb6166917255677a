// The image backend: its header, its size, its block table, its lock, and sparseness.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <vector>

#include "flashdir/file_io.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "support/temp_dir.h"

using namespace flashdir;
using flashdir::testing::TempDir;

namespace {

const Geometry kGeometry{4096, 64, 16, 8};

void create(const std::filesystem::path& path, const Geometry& g = kGeometry, ImageSpace space = ImageSpace::reserved) {
  REQUIRE(create_image_store(path, g, format::Uuid::random(), space).is_ok());
}

std::uint64_t allocated_bytes(const std::filesystem::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

void poke(const std::filesystem::path& path, std::uint64_t offset, std::vector<std::uint8_t> bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY));
  REQUIRE(fd.valid());
  REQUIRE(pwrite_all(fd.get(), bytes, offset, "test").is_ok());
}

std::string open_error(const std::filesystem::path& path) {
  auto store = open_image_store(path, ImageAccess::read_write);
  REQUIRE_FALSE(store.is_ok());
  return store.status().to_string();
}

}  // namespace

TEST_CASE("an image is created once and reopened with its geometry", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  const auto uuid = format::Uuid::random();
  REQUIRE(create_image_store(path, kGeometry, uuid).is_ok());
  CHECK(create_image_store(path, kGeometry, uuid).status().code() == StatusCode::io_error);
  auto header = read_image_header(path);
  REQUIRE(header.is_ok());
  CHECK(header->uuid == uuid);
  CHECK(header->geometry == kGeometry);
  auto store = open_image_store(path, ImageAccess::read_write);
  REQUIRE(store.is_ok());
  CHECK((*store)->geometry() == kGeometry);
  CHECK(std::filesystem::file_size(path) == format::image_layout(kGeometry).file_size);
}

TEST_CASE("a damaged image header is refused with a clear error", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  create(path);
  SECTION("bad magic") {
    poke(path, 0, {'X'});
    CHECK_THAT(open_error(path), Catch::Contains("bad magic") && Catch::Contains(path.string()));
  }
  SECTION("flipped geometry byte") {
    poke(path, 41, {0x7F});
    CHECK_THAT(open_error(path), Catch::Contains("image header checksum mismatch"));
  }
  SECTION("not an image at all") {
    std::filesystem::resize_file(path, 100);
    CHECK_THAT(open_error(path), Catch::Contains("truncated"));
  }
  SECTION("missing file") {
    std::filesystem::remove(path);
    CHECK_THAT(open_error(path), Catch::Contains("No such file"));
  }
}

TEST_CASE("an image of the wrong size is refused", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  create(path);
  const auto size = std::filesystem::file_size(path);
  SECTION("truncated") {
    std::filesystem::resize_file(path, size - 4096);
    CHECK_THAT(open_error(path), Catch::Contains("needs " + std::to_string(size) + " bytes"));
  }
  SECTION("grown") {
    std::filesystem::resize_file(path, size + 1);
    CHECK_THAT(open_error(path), Catch::Contains("needs " + std::to_string(size) + " bytes"));
  }
}

TEST_CASE("an impossible block table entry is refused", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  create(path);
  const auto layout = format::image_layout(kGeometry);
  poke(path, layout.block_table_offset + 3 * format::kBlockTableEntrySize + 4, {17, 0, 0, 0});
  CHECK_THAT(open_error(path), Catch::Contains("block 3 claims 17 programmed pages of 16"));
}

TEST_CASE("an image is driven by one process at a time", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  create(path);
  auto first = open_image_store(path, ImageAccess::read_write);
  REQUIRE(first.is_ok());
  CHECK_THAT(open_error(path), Catch::Contains("in use"));
  CHECK_FALSE(open_image_store(path, ImageAccess::read_only).is_ok());
  first = Status::io_error("closed");
  CHECK(open_image_store(path, ImageAccess::read_write).is_ok());
}

TEST_CASE("a read-only image refuses changes", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  create(path);
  auto store = open_image_store(path, ImageAccess::read_only);
  REQUIRE(store.is_ok());
  SimClock clock;
  SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  std::vector<std::uint8_t> data(4096), oob(64);
  CHECK_THAT(chip.program(Ppn(0), 1, data, oob).message(), Catch::Contains("read-only"));
  CHECK_THAT(chip.erase(BlockNumber(0)).message(), Catch::Contains("read-only"));
  CHECK(chip.next_page(BlockNumber(0)) == 0);
}

TEST_CASE("a sparse image costs no disk space until written", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  const Geometry big{4096, 64, 128, 131072};  // 64 GiB
  create(path, big, ImageSpace::sparse);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(static_cast<std::uint64_t>(st.st_size) > (64ULL << 30));
  CHECK(static_cast<std::uint64_t>(st.st_blocks) * 512 < (1ULL << 20));

  auto store = open_image_store(path, ImageAccess::read_write);
  REQUIRE(store.is_ok());
  SimClock clock;
  SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  std::vector<std::uint8_t> data(4096 * 128, 0xAB), oob(64 * 128, 0);
  const BlockNumber last(big.block_count - 1);
  REQUIRE(chip.program(big.first_page(last), 128, data, oob).is_ok());
  REQUIRE(chip.sync().is_ok());
  REQUIRE(::stat(path.c_str(), &st) == 0);
  const auto used = static_cast<std::uint64_t>(st.st_blocks) * 512;
  CHECK(used >= 512 * 1024);
  CHECK(used < 4 * 1024 * 1024);
  // Erasing gives the block's space back where the file system can punch holes.
  REQUIRE(chip.erase(last).is_ok());
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(static_cast<std::uint64_t>(st.st_blocks) * 512 < used);
}

TEST_CASE("a reserved image has all its space at once and keeps it through erases", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  const Geometry g{4096, 64, 128, 64};  // 32 MiB
  create(path, g);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  const std::uint64_t reserved = allocated_bytes(path);
  CHECK(reserved >= static_cast<std::uint64_t>(st.st_size));

  auto store = open_image_store(path, ImageAccess::read_write);
  REQUIRE(store.is_ok());
  SimClock clock;
  SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  std::vector<std::uint8_t> data(4096 * 128, 0xAB), oob(64 * 128, 0);
  REQUIRE(chip.program(g.first_page(BlockNumber(3)), 128, data, oob).is_ok());
  REQUIRE(chip.erase(BlockNumber(3)).is_ok());
  REQUIRE(chip.sync().is_ok());
  CHECK(allocated_bytes(path) >= reserved);
}

TEST_CASE("an image that does not fit its file system is refused, saying what is free", "[nand][image]") {
  TempDir dir;
  const auto path = dir / "nand.img";
  const Geometry huge{4096, 64, 128, 1ULL << 30};  // 512 PiB: more than any test machine has
  const auto created = create_image_store(path, huge, format::Uuid::random());
  REQUIRE_FALSE(created.is_ok());
  CHECK(created.status().code() == StatusCode::no_space);
  CHECK_THAT(created.status().message(), Catch::Contains("free"));
}
