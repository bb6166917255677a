#include "test_chip.h"

#include <stdexcept>

namespace flashdir::testing {

const char* backend_label(Backend backend) {
  switch (backend) {
    case Backend::memory: return "memory";
    case Backend::metadata: return "metadata-only";
    case Backend::image: return "image";
  }
  return "?";
}

TestChip::TestChip(Backend backend, const Geometry& geometry, LatencyProfile latency)
    : backend_(backend), latency_(latency) {
  switch (backend) {
    case Backend::memory: store_ = make_memory_store(geometry); break;
    case Backend::metadata: store_ = make_metadata_store(geometry); break;
    case Backend::image: {
      dir_.emplace();
      image_path_ = *dir_ / "nand.img";
      auto created = create_image_store(image_path_, geometry, format::Uuid::random());
      if (!created.is_ok()) throw std::runtime_error(created.status().to_string());
      store_ = created.value();
      break;
    }
  }
  chip_ = std::make_unique<SimulatedChip>(store_, latency_, clock_);
}

void TestChip::reopen() {
  chip_.reset();
  if (backend_ == Backend::image) {
    store_.reset();  // closes the file and releases its lock
    auto opened = open_image_store(image_path_, ImageAccess::read_write);
    if (!opened.is_ok()) throw std::runtime_error(opened.status().to_string());
    store_ = opened.value();
  }
  chip_ = std::make_unique<SimulatedChip>(store_, latency_, clock_);
}

PageImage random_page(const Geometry& geometry, SeededRandom& random, std::uint64_t sequence) {
  PageImage page{std::vector<std::uint8_t>(geometry.page_size_bytes),
                 std::vector<std::uint8_t>(geometry.oob_size_bytes)};
  for (auto& byte : page.data) byte = static_cast<std::uint8_t>(random.next_u64());
  format::OobRecord record;
  record.kind = format::PageKind::data;
  record.logical_number = random.uniform(1 << 20);
  record.sequence = sequence;
  record.version = sequence;
  record.data_hash = format::xxh3(page.data);
  format::encode_oob(record, page.oob);
  return page;
}

}  // namespace flashdir::testing

namespace flashdir::testing {

ConstByteSpan data_to_program(const NandChip& chip, const PageImage& page) {
  return chip.stores_data() ? ConstByteSpan(page.data) : ConstByteSpan();
}

}  // namespace flashdir::testing
