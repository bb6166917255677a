// The restart image (doc/cache.md "The restart image"): a clean restart from the image a clean
// close leaves keeps exactly what a restart from every metadata page keeps, and an image whose
// tables do not add up is refused (the open then reads the metadata pages).
#include <catch2/catch.hpp>

#include "engine_rig.h"
#include <filesystem>
#include <fstream>

#include "flashdir/endian.h"
#include "flashdir/format.h"
#include "flashdir/random.h"

using flashdir::ConstByteSpan;
using flashdir::LittleEndianReader;
using flashdir::LittleEndianWriter;
using flashdir::SeededRandom;
using flashdir::cache::EngineOptions;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

constexpr int kFiles = 6;

std::string name_of(int f) { return "f" + std::to_string(f); }

// Files of a fifth to seven tenths of the cache, read in random pieces (more than the cache holds, so that CLOCK
// evicts and file numbers are freed and reused) and partly rewritten, always the same way.
std::vector<std::vector<std::uint8_t>> churn(EngineRig& rig) {
  const std::uint32_t P = rig.page_size();
  std::vector<std::vector<std::uint8_t>> files;
  const std::uint64_t capacity = rig.engine().stats().capacity_pages;
  for (int f = 0; f < kFiles; ++f) {
    files.push_back(pattern(100 + f, (2 + f) * capacity / 10 * P + 77));  // 2.7 times the cache in all
    rig.put(name_of(f), files.back());
  }
  SeededRandom random(7);
  for (int step = 0; step < 300; ++step) {
    const int f = static_cast<int>(random.uniform(kFiles));
    const auto& bytes = files[f];
    const std::uint64_t offset = random.uniform(bytes.size());
    const std::size_t length = random.between(1, 24 * P);
    if (random.one_in(5)) {
      auto file = rig.engine().open_file(name_of(f));
      REQUIRE(file.is_ok());
      const auto update = pattern(1000 + step, std::min<std::size_t>(length, bytes.size() - offset));
      REQUIRE(rig.engine().write(*file, offset, update).is_ok());
      std::copy(update.begin(), update.end(), files[f].begin() + static_cast<std::ptrdiff_t>(offset));
      REQUIRE(rig.engine().release(*file).is_ok());
    } else {
      const std::size_t end = std::min<std::size_t>(bytes.size(), offset + length);
      REQUIRE(rig.read_through(name_of(f), offset, length) ==
              std::vector<std::uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                                        bytes.begin() + static_cast<std::ptrdiff_t>(end)));
    }
  }
  return files;
}

// Reads every file whole; returns how many pages hit.
std::uint64_t read_all_hits(EngineRig& rig, const std::vector<std::vector<std::uint8_t>>& files) {
  const std::uint64_t before = rig.engine().stats().read_hit_pages;
  for (int f = 0; f < kFiles; ++f) CHECK(rig.read_through(name_of(f), 0, files[f].size() + 10) == files[f]);
  return rig.engine().stats().read_hit_pages - before;
}

// A restart image file as doc/format.md lays it out: where its index and parts are, and the
// means to change a part and re-seal it (its checksum, the index's, the header's), as only a
// bug in the saving code could, to test what the open checks beyond the checksums.
class ImageFile {
 public:
  explicit ImageFile(std::filesystem::path path) : path_(std::move(path)) {
    std::ifstream in(path_, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
    LittleEndianReader header(bytes_);
    header.skip(40);
    index_offset_ = header.u64();
    LittleEndianReader index(ConstByteSpan(bytes_).subspan(index_offset_));
    index.skip(12);  // metadata pages, slots
    entries_per_page_ = index.u32();
    index.skip(8 + 8);  // the rest of the layout, the store's sequence
    const std::uint32_t numbers = index.u32();
    index.skip(12 * std::size_t{numbers});
    chunk_slots_ = index.u32();
    const std::uint32_t chunks = index.u32();
    for (std::uint32_t c = 0; c < chunks; ++c) {
      chunks_.push_back(index_offset_ + index.offset());
      index.skip(24 + 4);
    }
    index.skip(4);
    const std::uint32_t files = index.u32();
    for (std::uint32_t f = 0; f < files; ++f) {
      index.skip(8);
      tables_.push_back(index_offset_ + index.offset());
      index.skip(24);
    }
  }

  // Where each part's record (offset, length, checksum) sits in the file.
  const std::vector<std::size_t>& chunks() const { return chunks_; }
  const std::vector<std::size_t>& tables() const { return tables_; }
  std::size_t index_offset() const { return index_offset_; }
  // The metadata pages that hold the entries of chunk `c`.
  std::pair<std::uint32_t, std::uint32_t> metadata_pages_of_chunk(std::size_t c) const {
    const auto first = static_cast<std::uint32_t>(c * chunk_slots_ / entries_per_page_);
    return {first, first + chunk_slots_ / entries_per_page_};
  }
  std::span<std::uint8_t> part(std::size_t record) {
    LittleEndianReader in(ConstByteSpan(bytes_).subspan(record));
    const std::uint64_t offset = in.u64();
    return std::span<std::uint8_t>(bytes_).subspan(offset, in.u64());
  }
  void flip(std::size_t at) { bytes_[at] ^= 0x10; }
  // Every checksum made right again for the bytes as they now are.
  void reseal() {
    for (const auto* records : {&chunks_, &tables_}) {
      for (std::size_t record : *records) {
        const std::uint64_t sum = flashdir::format::xxh3(part(record));
        LittleEndianWriter(std::span<std::uint8_t>(bytes_).subspan(record + 16, 8)).u64(sum);
      }
    }
    const std::uint64_t index_sum = flashdir::format::xxh3(ConstByteSpan(bytes_).subspan(index_offset_));
    LittleEndianWriter(std::span<std::uint8_t>(bytes_).subspan(56, 8)).u64(index_sum);
    const std::uint64_t header_sum = flashdir::format::xxh3(ConstByteSpan(bytes_).first(64));
    LittleEndianWriter(std::span<std::uint8_t>(bytes_).subspan(64, 8)).u64(header_sum);
  }
  void save() const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
  }

 private:
  std::filesystem::path path_;
  std::vector<std::uint8_t> bytes_;
  std::size_t index_offset_ = 0;
  std::uint32_t entries_per_page_ = 1, chunk_slots_ = 1;
  std::vector<std::size_t> chunks_, tables_;
};

// The first slot in a file's page table part (count, cursor, bucket count, then buckets).
std::size_t first_bucket_in_use(std::span<const std::uint8_t> table) {
  for (std::size_t at = 16; at + 4 <= table.size(); at += 4) {
    if (LittleEndianReader(table.subspan(at, 4)).u32() != UINT32_MAX) return at;
  }
  FAIL("a page table with no slot");
  return 0;
}

// Churns a cache and its twin alike, restarts one from its image after `edit` and the other
// from its metadata pages, and checks that they keep and hit the same pages, every byte right.
// Returns the first's restart report.
flashdir::cache::RestartReport restart_beside_twin(const std::function<void(EngineRig&, ImageFile&)>& edit) {
  EngineRig from_image, from_pages;
  const auto files = churn(from_image);
  REQUIRE(churn(from_pages) == files);
  auto taken = from_image.restart_from_image([&](const std::filesystem::path& path) {
    ImageFile image(path);
    edit(from_image, image);
    image.save();
  });
  REQUIRE(taken.is_ok());
  REQUIRE(from_pages.restart().is_ok());
  // Nothing is read from the image before it is needed: no part checked yet.
  CHECK(from_image.engine().stats().restart.image_parts_damaged == 0);
  CHECK(read_all_hits(from_image, files) == read_all_hits(from_pages, files));
  CHECK(from_image.engine().stats().cached_pages == from_pages.engine().stats().cached_pages);
  return from_image.engine().stats().restart;
}

}  // namespace

TEST_CASE("a clean restart from the restart image keeps exactly what the metadata pages keep") {
  const WriteMode mode = GENERATE(WriteMode::write_through, WriteMode::write_around);
  INFO("write mode " << static_cast<int>(mode));
  EngineOptions options;
  options.write_mode = mode;
  // Two caches through the same history: one restarts from the image, one from the metadata pages.
  EngineRig from_image(options), from_pages(options);
  const auto files = churn(from_image);
  REQUIRE(churn(from_pages) == files);
  REQUIRE(from_image.engine().stats().evicted_pages > 0);

  auto taken = from_image.restart_from_image();
  REQUIRE(taken.is_ok());
  CHECK(*taken);
  REQUIRE(from_pages.restart().is_ok());
  const auto image_restart = from_image.engine().stats().restart;
  const auto pages_restart = from_pages.engine().stats().restart;
  CHECK(image_restart.from_restart_image);
  CHECK_FALSE(pages_restart.from_restart_image);
  CHECK(image_restart.clean_shutdown);
  CHECK(image_restart.usable_slots == pages_restart.usable_slots);
  CHECK(from_image.engine().stats().cached_pages == from_pages.engine().stats().cached_pages);
  // The same pages hit, and every byte is right.
  CHECK(read_all_hits(from_image, files) == read_all_hits(from_pages, files));

  // And the cache goes on from there: more churn, a cut, a recovery from the metadata pages.
  churn(from_image);
  REQUIRE(from_image.power_cycle().is_ok());
  CHECK_FALSE(from_image.engine().stats().restart.from_restart_image);
  read_all_hits(from_image, files);
}

TEST_CASE("a write-back cache restarts from the restart image after its close wrote everything back") {
  EngineRig rig(flashdir::testing::write_back_options());
  const auto files = churn(rig);
  auto taken = rig.restart_from_image();
  INFO(taken.status().to_string());
  REQUIRE(taken.is_ok());
  CHECK(*taken);
  for (int f = 0; f < kFiles; ++f) CHECK(rig.get(name_of(f)) == files[f]);
  CHECK(read_all_hits(rig, files) > 0);
}

TEST_CASE("a restart image whose index fails is refused, and the metadata pages are read") {
  EngineRig rig;
  const auto files = churn(rig);
  const std::uint64_t cached = rig.engine().stats().cached_pages;
  SECTION("a flipped byte in the index") {
    auto taken = rig.restart_from_image([](const std::filesystem::path& path) {
      ImageFile image(path);
      image.flip(image.index_offset() + 30);
      image.save();
    });
    REQUIRE(taken.is_ok());
    CHECK_FALSE(*taken);
  }
  SECTION("cut short") {
    auto taken = rig.restart_from_image([](const std::filesystem::path& path) {
      std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
    });
    REQUIRE(taken.is_ok());
    CHECK_FALSE(*taken);
  }
  SECTION("another slot layout, sealed as if saved so") {
    auto taken = rig.restart_from_image([](const std::filesystem::path& path) {
      ImageFile image(path);
      image.flip(image.index_offset() + 8);
      image.reseal();
      image.save();
    });
    REQUIRE(taken.is_ok());
    CHECK_FALSE(*taken);
  }
  CHECK(rig.engine().stats().restart.usable_slots == cached);
  read_all_hits(rig, files);
}

TEST_CASE("a damaged part of a restart image is rebuilt from the chip when first needed") {
  SECTION("a chunk of entries: read from its metadata pages instead") {
    const auto report = restart_beside_twin([](EngineRig&, ImageFile& image) { image.part(image.chunks()[0])[40] ^= 1; });
    CHECK(report.from_restart_image);
    // The chunk, and the first page table naming a slot of it: the entries read from the chip
    // are the authority, so the tables are rebuilt from them (all at once).
    CHECK(report.image_parts_damaged == 2);
    CHECK(report.image_slots_lost == 0);
  }
  SECTION("a file's page table: rebuilt from the entries") {
    const auto report = restart_beside_twin([](EngineRig&, ImageFile& image) { image.part(image.tables()[0])[20] ^= 1; });
    CHECK(report.from_restart_image);
    CHECK(report.image_parts_damaged == 1);
    CHECK(report.image_slots_lost == 0);
  }
  SECTION("two files' page tables each hold a slot of the other, sealed as if saved so: rebuilt") {
    const auto report = restart_beside_twin([](EngineRig&, ImageFile& image) {
      REQUIRE(image.tables().size() >= 2);
      auto a = image.part(image.tables()[0]);
      auto b = image.part(image.tables()[1]);
      const std::size_t at_a = first_bucket_in_use(a), at_b = first_bucket_in_use(b);
      for (std::size_t i = 0; i < 4; ++i) std::swap(a[at_a + i], b[at_b + i]);
      image.reseal();
    });
    CHECK(report.from_restart_image);
    CHECK(report.image_parts_damaged == 1);  // the first of the two; the other is rebuilt with it
  }
}

TEST_CASE("a damaged chunk of a restart image over a damaged metadata page: its pages are dropped, never served") {
  EngineRig rig;
  const auto files = churn(rig);
  const std::uint64_t cached = rig.engine().stats().cached_pages;
  REQUIRE(cached == rig.engine().stats().capacity_pages);
  auto taken = rig.restart_from_image([&](const std::filesystem::path& path) {
    ImageFile image(path);
    image.part(image.chunks()[0])[40] ^= 1;
    image.save();
    rig.damage_metadata_page(0);
  });
  REQUIRE(taken.is_ok());
  CHECK(*taken);
  // Every byte right: the pages whose entries are gone are read from the backing.
  const std::uint64_t hits = read_all_hits(rig, files);
  const auto report = rig.engine().stats().restart;
  // The chunk, and the tables of files that had pages there (their slots no longer check).
  CHECK(report.image_parts_damaged >= 1);
  CHECK(report.image_slots_lost > 0);
  CHECK(hits <= cached - report.image_slots_lost);
}

TEST_CASE("restart after restart from damaged restart images never serves a wrong byte") {
  EngineRig rig(EngineOptions{}, 2048);  // slots for several chunks of entries
  INFO("slots " << rig.engine().stats().capacity_pages);
  const std::uint32_t P = rig.page_size();
  const std::uint64_t capacity = rig.engine().stats().capacity_pages;
  std::vector<std::vector<std::uint8_t>> files;
  for (int f = 0; f < 4; ++f) {
    files.push_back(pattern(200 + f, (3 + f) * capacity / 10 * P + 5));
    rig.put(name_of(f), files.back());
  }
  SeededRandom random(11);
  for (int round = 0; round < 18; ++round) {
    INFO("round " << round);
    for (int step = 0; step < 60; ++step) {
      const auto f = random.uniform(files.size());
      const std::uint64_t offset = random.uniform(files[f].size());
      const std::size_t length = std::min<std::size_t>(random.between(1, 8 * P), files[f].size() - offset);
      if (random.one_in(4)) {
        auto file = rig.engine().open_file(name_of(static_cast<int>(f)));
        REQUIRE(file.is_ok());
        const auto update = pattern(5000 + 100 * round + step, length);
        REQUIRE(rig.engine().write(*file, offset, update).is_ok());
        std::copy(update.begin(), update.end(), files[f].begin() + static_cast<std::ptrdiff_t>(offset));
        REQUIRE(rig.engine().release(*file).is_ok());
      } else {
        rig.read_through(name_of(static_cast<int>(f)), offset, length);
      }
    }
    CHECK(rig.engine().stats().capacity_pages > 16384);
    // In turn: an image left whole, one byte flipped anywhere in it (header, index or a part),
    // a part damaged and a metadata page too.
    const int damage = round % 3;
    auto taken = rig.restart_from_image([&](const std::filesystem::path& path) {
      if (damage == 0) return;
      ImageFile image(path);
      if (damage == 1) {
        image.flip(random.uniform(std::filesystem::file_size(path)));
      } else {
        const std::size_t c = random.uniform(image.chunks().size());
        auto chunk = image.part(image.chunks()[c]);
        chunk[random.uniform(chunk.size())] ^= 0x40;
        const auto [first, end] = image.metadata_pages_of_chunk(c);
        rig.damage_metadata_page(static_cast<std::uint32_t>(random.between(first, end - 1)));
      }
      image.save();
    });
    REQUIRE(taken.is_ok());
    if (damage != 1) CHECK(*taken);  // the index is whole
    for (std::size_t f = 0; f < files.size(); ++f) {
      CHECK(rig.read_through(name_of(static_cast<int>(f)), 0, files[f].size()) == files[f]);
    }
  }
}

TEST_CASE("a restart image saved before the last one was read: the parts left in the last are carried over") {
  EngineRig from_image, from_pages;
  const auto files = churn(from_image);
  REQUIRE(churn(from_pages) == files);
  for (int restart = 0; restart < 3; ++restart) {
    auto taken = from_image.restart_from_image();  // nothing read in between
    REQUIRE(taken.is_ok());
    CHECK(*taken);
  }
  REQUIRE(from_pages.restart().is_ok());
  CHECK(from_image.engine().stats().cached_pages == from_pages.engine().stats().cached_pages);
  CHECK(read_all_hits(from_image, files) == read_all_hits(from_pages, files));
}

TEST_CASE("a cut while a damaged chunk of a restart image is read from the chip: no wrong byte, and all back after") {
  EngineRig rig;
  const auto files = churn(rig);
  auto taken = rig.restart_from_image([](const std::filesystem::path& path) {
    ImageFile image(path);
    image.part(image.chunks()[0])[40] ^= 1;
    image.save();
  });
  REQUIRE(taken.is_ok());
  REQUIRE(*taken);
  // The first read needs the chunk: its image bytes fail, and the cut comes with the chip's.
  rig.cut_at_next_chip_operation();
  for (int f = 0; f < kFiles; ++f) {
    auto file = rig.engine().open_file(name_of(f));
    if (!file.is_ok()) continue;
    std::vector<std::uint8_t> bytes(files[f].size());
    auto got = rig.engine().read(*file, 0, bytes);
    if (got.is_ok()) {
      bytes.resize(*got);
      CHECK(bytes == files[f]);  // served, then right (from the backing)
    }
    (void)rig.engine().release(*file);
  }
  CHECK(rig.power_lost());
  REQUIRE(rig.power_cycle().is_ok());
  CHECK_FALSE(rig.engine().stats().restart.from_restart_image);
  CHECK(read_all_hits(rig, files) > 0);
}
