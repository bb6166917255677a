// Chip operations per second for each backend, 4 KiB pages: the ceiling on how fast the
// simulator and the daemon can drive the chip. The metadata-only backend is driven the way the
// FTL drives it in trace replay: host pages programmed and read without data.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "flashdir/random.h"

using namespace flashdir;

namespace {

const Geometry kGeometry{4096, 64, 128, 256};  // 128 MiB

enum BackendArg { kMemory = 0, kMetadata = 1, kImage = 2 };

// A chip on the chosen backend; an image lives in a fresh directory removed afterwards.
class BenchChip {
 public:
  explicit BenchChip(int backend) {
    if (backend == kImage) {
      std::string pattern = (std::filesystem::temp_directory_path() / "flashdir-bench-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) std::abort();
      dir_ = pattern;
      auto created = create_image_store(dir_ / "nand.img", kGeometry, format::Uuid::random());
      if (!created.is_ok()) std::abort();
      store_ = created.value();
    } else {
      store_ = backend == kMemory ? make_memory_store(kGeometry) : make_metadata_store(kGeometry);
    }
    chip_ = std::make_unique<SimulatedChip>(store_, LatencyProfile::of(LatencyPreset::zero), clock_);
  }
  ~BenchChip() {
    chip_.reset();
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  SimulatedChip& chip() { return *chip_; }

  // Programs the next `count` pages of a log over the whole chip, erasing blocks as it wraps.
  void append(std::uint32_t count, const std::vector<std::uint8_t>& data, const std::vector<std::uint8_t>& oob) {
    const Geometry& g = kGeometry;
    if (next_ % g.pages_per_block == 0) {
      const BlockNumber block = g.block_of(Ppn(next_));
      if (chip_->next_page(block) > 0 && !chip_->erase(block).is_ok()) std::abort();
    }
    if (!chip_->program(Ppn(next_), count, data, oob).is_ok()) std::abort();
    next_ = (next_ + count) % g.page_count();
  }

 private:
  std::filesystem::path dir_;
  std::shared_ptr<PageStore> store_;
  SimClock clock_;
  std::unique_ptr<SimulatedChip> chip_;
  std::uint64_t next_ = 0;
};

const char* label(int backend) {
  return backend == kMemory ? "memory" : backend == kMetadata ? "metadata-only" : "image";
}

// `pages` pages of data as the backend is given them: none on the metadata-only chip.
std::vector<std::uint8_t> data_for(int backend, std::uint32_t pages) {
  if (backend == kMetadata) return {};
  return std::vector<std::uint8_t>(std::size_t{pages} * kGeometry.page_size_bytes, 0x5A);
}

std::vector<std::uint8_t> oob_for(std::uint32_t pages) {
  return std::vector<std::uint8_t>(std::size_t{pages} * kGeometry.oob_size_bytes, 0);
}

void BM_Program(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  BenchChip bench(backend);
  const auto run = static_cast<std::uint32_t>(state.range(1));
  const std::vector<std::uint8_t> data = data_for(backend, run);
  const std::vector<std::uint8_t> oob = oob_for(run);
  for (auto _ : state) bench.append(run, data, oob);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * run);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * data.size()));
  state.SetLabel(label(backend));
}

// Programs `run` pages and makes them durable with sync() (fdatasync), as a flush does.
void BM_ProgramAndSync(benchmark::State& state) {
  BenchChip bench(kImage);
  const auto run = static_cast<std::uint32_t>(state.range(0));
  const std::vector<std::uint8_t> data = data_for(kImage, run);
  const std::vector<std::uint8_t> oob = oob_for(run);
  for (auto _ : state) {
    bench.append(run, data, oob);
    if (!bench.chip().sync().is_ok()) std::abort();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * run);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * data.size()));
  state.SetLabel(label(kImage));
}

void BM_Read(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  BenchChip bench(backend);
  const auto run = static_cast<std::uint32_t>(state.range(1));
  const std::vector<std::uint8_t> block_data = data_for(backend, kGeometry.pages_per_block);
  const std::vector<std::uint8_t> block_oob = oob_for(kGeometry.pages_per_block);
  for (std::uint64_t b = 0; b < kGeometry.block_count; ++b) {
    bench.append(kGeometry.pages_per_block, block_data, block_oob);
  }
  SeededRandom random(1);
  std::vector<std::uint8_t> out = data_for(backend, run);
  std::vector<std::uint8_t> out_oob = oob_for(run);
  for (auto _ : state) {
    const Ppn first(random.uniform(kGeometry.page_count() / run) * run);
    if (!bench.chip().read(first, run, out, out_oob).is_ok()) std::abort();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * run);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
  state.SetLabel(label(backend));
}

void BM_Erase(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  BenchChip bench(backend);
  const std::vector<std::uint8_t> data = data_for(backend, kGeometry.pages_per_block);
  const std::vector<std::uint8_t> oob = oob_for(kGeometry.pages_per_block);
  std::uint64_t block = 0;
  for (auto _ : state) {
    state.PauseTiming();  // only the erase is measured; the block is filled so it has work to do
    const BlockNumber b(block++ % kGeometry.block_count);
    if (bench.chip().next_page(b) == 0 &&
        !bench.chip().program(kGeometry.first_page(b), kGeometry.pages_per_block, data, oob).is_ok()) {
      std::abort();
    }
    state.ResumeTiming();
    if (!bench.chip().erase(b).is_ok()) std::abort();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetLabel(label(backend));
}

// Arguments: backend, pages per request (1 page, and a whole 128-page block as one run).
BENCHMARK(BM_Program)->ArgsProduct({{kMemory, kMetadata, kImage}, {1, 128}});
BENCHMARK(BM_Read)->ArgsProduct({{kMemory, kMetadata, kImage}, {1, 128}});
BENCHMARK(BM_Erase)->ArgsProduct({{kMemory, kMetadata, kImage}});
// Argument: pages programmed per sync (an fsync after each page, and after each block).
BENCHMARK(BM_ProgramAndSync)->Arg(1)->Arg(128)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
