// A simulated chip on any backend for tests, with the means to "reopen" it the way a power
// cycle would: a new chip over the same medium (memory) or over the image file reopened.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "flashdir/clock.h"
#include "flashdir/format.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "flashdir/random.h"
#include "temp_dir.h"

namespace flashdir::testing {

enum class Backend { memory, metadata, image };
const char* backend_label(Backend backend);
inline constexpr Backend kAllBackends[] = {Backend::memory, Backend::metadata, Backend::image};

class TestChip {
 public:
  TestChip(Backend backend, const Geometry& geometry, LatencyProfile latency = LatencyProfile::of(LatencyPreset::zero));

  SimulatedChip& chip() { return *chip_; }
  SimClock& clock() { return clock_; }
  PageStore& store() { return *store_; }  // the medium itself (to damage it)
  Backend backend() const { return backend_; }
  const std::filesystem::path& image_path() const { return image_path_; }
  // Drops the chip (and for images closes the file) and opens the medium afresh.
  void reopen();

 private:
  Backend backend_;
  LatencyProfile latency_;
  std::optional<TempDir> dir_;
  std::filesystem::path image_path_;
  std::shared_ptr<PageStore> store_;
  SimClock clock_;
  std::unique_ptr<SimulatedChip> chip_;
};

// One page's worth of bytes with a valid OOB record describing them.
struct PageImage {
  std::vector<std::uint8_t> data;
  std::vector<std::uint8_t> oob;
};
PageImage random_page(const Geometry& geometry, SeededRandom& random, std::uint64_t sequence);
// The data buffer to program for `page`: none on a metadata-only chip, as trace replay does.
ConstByteSpan data_to_program(const NandChip& chip, const PageImage& page);

}  // namespace flashdir::testing
