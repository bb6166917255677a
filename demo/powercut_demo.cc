// flashdir-powercut-demo: a random workload through the FTL of a formatted cache, a power cut
// in the middle, recovery, and a report of what survived.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <optional>
#include <vector>

#include "flashdir/cache_dir.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/faulty_chip.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"

using namespace flashdir;

namespace {

// Page content written by request `version` to `lpn`; its hash is what the demo remembers.
void fill(std::uint64_t lpn, std::uint64_t version, ByteSpan page) {
  SeededRandom random(lpn * 0x9E3779B97F4A7C15ULL + version);
  for (auto& byte : page) byte = static_cast<std::uint8_t>(random.next_u64());
}

FtlOptions ftl_options(const format::Superblock& sb) {
  FtlOptions options;
  options.mapping = sb.mapping_scheme;
  options.gc = sb.gc_policy;
  options.overprovision_permille = sb.overprovision_permille;
  return options;
}

int fail(const Status& status) {
  fmt::print(stderr, "flashdir-powercut-demo: {}\n", status.to_string());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs random writes, reads and flushes through the FTL of a cache made by mkfs.flashdir, "
               "cuts the power at a random chip operation, recovers, and reports which acknowledged "
               "writes survived."};
  std::string dir;
  std::uint64_t seed = 1;
  std::uint64_t requests = 20000;
  app.add_option("DIR", dir, "Cache directory made by mkfs.flashdir")->required();
  app.add_option("--seed", seed, "Seed of the workload and of the cut point")->capture_default_str();
  app.add_option("--requests", requests, "Requests the workload would issue without a cut")
      ->capture_default_str()
      ->check(CLI::Range(10, 10'000'000));
  CLI11_PARSE(app, argc, argv);

  const CacheDirPaths paths(dir);
  auto sb = read_superblock_file(paths.superblock);
  if (!sb.is_ok()) return fail(sb.status());
  const Geometry g = sb->superblock.geometry;
  const FtlOptions options = ftl_options(sb->superblock);
  SeededRandom random(seed);

  // Per LPN: the sequence number of the last acknowledged write (0: none) and its content hash,
  // and the hash of the write in flight when the power went (which may or may not land).
  std::vector<std::uint64_t> acknowledged;
  std::vector<std::uint64_t> expected_hash;
  std::vector<std::uint64_t> in_flight_hash;
  CutReport cut;
  {
    auto store = open_image_store(paths.image, ImageAccess::read_write);
    if (!store.is_ok()) return fail(store.status());
    SimClock clock;
    SimulatedChip chip(store.value(), sb->superblock.latency, clock);
    FaultPlan plan;
    plan.seed = seed;
    plan.cut_one_in = requests;  // on average a few requests' chip operations into the run
    FaultyChip faulty(chip, plan);
    auto ftl = Ftl::open(faulty, clock, options);
    if (!ftl.is_ok()) return fail(ftl.status());
    const std::uint64_t L = (*ftl)->logical_pages();
    acknowledged.assign(L, 0);
    expected_hash.assign(L, 0);
    in_flight_hash.assign(L, 0);
    fmt::print("seed {}: {} logical pages, {} mapping, {} GC; writing until the power fails\n", seed, L,
               format::mapping_scheme_name(options.mapping), format::gc_policy_name(options.gc));
    std::vector<std::uint8_t> data;
    std::uint64_t writes = 0, reads = 0, flushes = 0;
    for (std::uint64_t r = 0; r < requests && !faulty.power_lost(); ++r) {
      const auto count = static_cast<std::uint32_t>(random.between(1, 16));
      const std::uint64_t lpn = random.uniform(L - count);
      data.resize(std::size_t{count} * g.page_size_bytes);
      const std::uint64_t choice = random.uniform(100);
      if (choice < 70) {
        const std::uint64_t version = (*ftl)->durable_seq() + 1;
        for (std::uint32_t i = 0; i < count; ++i) fill(lpn + i, version, ByteSpan(data).subspan(i * g.page_size_bytes, g.page_size_bytes));
        auto v = (*ftl)->write(Lpn(lpn), count, data);
        if (!v.is_ok()) {
          for (std::uint32_t i = 0; i < count; ++i) {
            in_flight_hash[lpn + i] = format::xxh3(ConstByteSpan(data).subspan(i * g.page_size_bytes, g.page_size_bytes));
          }
          break;
        }
        ++writes;
        for (std::uint32_t i = 0; i < count; ++i) {
          acknowledged[lpn + i] = *v;
          expected_hash[lpn + i] = format::xxh3(ConstByteSpan(data).subspan(i * g.page_size_bytes, g.page_size_bytes));
        }
      } else if (choice < 97) {
        if (!(*ftl)->read(Lpn(lpn), count, data).is_ok()) break;
        ++reads;
      } else {
        if (!(*ftl)->flush().is_ok()) break;
        ++flushes;
      }
    }
    cut = faulty.cut();
    const FtlStats stats = (*ftl)->stats();
    fmt::print("{} writes, {} reads, {} flushes acknowledged; {} GC runs, write amplification {:.2f}\n", writes, reads,
               flushes, stats.gc_runs, stats.write_amplification());
    fmt::print("{}\n", cut.describe());
  }

  // Power back on: a fresh chip over the same image, and recovery.
  auto store = open_image_store(paths.image, ImageAccess::read_write);
  if (!store.is_ok()) return fail(store.status());
  SimClock clock;
  SimulatedChip chip(store.value(), sb->superblock.latency, clock);
  auto ftl = Ftl::open(chip, clock, options);
  if (!ftl.is_ok()) return fail(ftl.status());
  const RecoveryReport& recovery = (*ftl)->recovery();
  fmt::print("recovery from checkpoint {}: {} blocks scanned, {} data and {} translation pages replayed, "
             "{} damaged pages skipped\n",
             recovery.checkpoint_generation, recovery.scanned_blocks, recovery.replayed_data_pages,
             recovery.replayed_translation_pages, recovery.damaged_pages);
  for (const auto& step : recovery.steps) fmt::print("  {} (simulated)\n", step);

  // Every acknowledged page must read back as written, or as the write in flight if that
  // landed after all (the contract allows either for the pages it covers).
  std::uint64_t expected = 0, intact = 0, landed = 0;
  std::vector<std::uint8_t> page(g.page_size_bytes);
  for (std::uint64_t lpn = 0; lpn < acknowledged.size(); ++lpn) {
    if (acknowledged[lpn] == 0 && in_flight_hash[lpn] == 0) continue;
    if (Status s = (*ftl)->read(Lpn(lpn), 1, page); !s.is_ok()) return fail(s);
    const std::uint64_t hash = format::xxh3(page);
    if (in_flight_hash[lpn] != 0 && hash == in_flight_hash[lpn]) {
      ++landed;
      if (acknowledged[lpn] != 0) ++expected, ++intact;
      continue;
    }
    if (acknowledged[lpn] == 0) continue;
    ++expected;
    if (hash == expected_hash[lpn]) ++intact;
  }
  fmt::print("after recovery: {} of {} pages written and acknowledged before the cut read back intact, {} lost;\n"
             "{} pages of the write in flight at the cut landed (allowed either way)\n",
             intact, expected, expected - intact, landed);
  if (Status s = (*ftl)->close(); !s.is_ok()) return fail(s);
  return intact == expected ? 0 : 2;
}
