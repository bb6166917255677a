// flashdir-chip-demo: a short log-structured workload on a formatted cache's chip, a power
// cut in the middle, and a report of what survived after reopening the image.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <optional>
#include <vector>

#include "flashdir/cache_dir.h"
#include "flashdir/nand/faulty_chip.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"

using namespace flashdir;

namespace {

struct Written {
  std::uint64_t sequence = 0;
  std::uint64_t data_hash = 0;
};

struct LogWriter {
  NandChip& chip;
  SeededRandom& random;
  std::vector<std::optional<Written>>& acknowledged;  // per physical page
  std::uint64_t block = 0;
  std::uint64_t sequence = 0;
  std::uint64_t erases = 0;

  // Appends one page to the log; wraps around the chip, erasing the block it moves into.
  Status append() {
    const Geometry& g = chip.geometry();
    if (chip.next_page(BlockNumber(block)) == g.pages_per_block) {
      block = (block + 1) % g.block_count;
      if (chip.next_page(BlockNumber(block)) > 0) {
        FLASHDIR_TRY(chip.erase(BlockNumber(block)));
        ++erases;
        for (std::uint32_t i = 0; i < g.pages_per_block; ++i) acknowledged[g.page_at(BlockNumber(block), i).value].reset();
      }
    }
    const Ppn page = g.page_at(BlockNumber(block), chip.next_page(BlockNumber(block)));
    std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
    for (auto& byte : data) byte = static_cast<std::uint8_t>(random.next_u64());
    format::OobRecord record;
    record.logical_number = sequence % 1000;
    record.sequence = record.version = ++sequence;
    record.data_hash = format::xxh3(data);
    format::encode_oob(record, oob);
    FLASHDIR_TRY(chip.program(page, 1, data, oob));
    acknowledged[page.value] = Written{record.sequence, record.data_hash};
    return Status::ok();
  }
};

int fail(const Status& status) {
  fmt::print(stderr, "flashdir-chip-demo: {}\n", status.to_string());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a log of pages to the chip of a formatted cache, cuts the power in the middle "
               "and reports, after reopening the image, which acknowledged pages survived."};
  std::string dir;
  std::uint64_t seed = 1;
  std::uint64_t pages = 3000;
  app.add_option("DIR", dir, "Cache directory made by mkfs.flashdir")->required();
  app.add_option("--seed", seed, "Seed of the workload and of the cut point")->capture_default_str();
  app.add_option("--pages", pages, "Pages the workload would write without a cut")->capture_default_str()->check(CLI::Range(10, 1'000'000));
  CLI11_PARSE(app, argc, argv);

  const CacheDirPaths paths(dir);
  auto superblock = read_superblock_file(paths.superblock);
  if (!superblock.is_ok()) return fail(superblock.status());
  SeededRandom random(seed);
  const std::uint64_t cut_at = pages / 3 + random.uniform(pages / 3);
  fmt::print("seed {}: writing up to {} pages to {}, power cut planned at chip operation {}\n", seed, pages,
             paths.image.string(), cut_at);

  std::vector<std::optional<Written>> acknowledged(superblock->superblock.geometry.page_count());
  CutReport cut;
  std::uint64_t written = 0;
  {
    auto store = open_image_store(paths.image, ImageAccess::read_write);
    if (!store.is_ok()) return fail(store.status());
    SimClock clock;
    SimulatedChip chip(store.value(), superblock->superblock.latency, clock);
    FaultPlan plan;
    plan.seed = seed;
    plan.cut_at_operation = cut_at;
    FaultyChip faulty(chip, plan);
    LogWriter log{faulty, random, acknowledged, 0, 0, 0};
    // Continue an earlier run's log rather than rewriting its first block.
    while (log.block + 1 < chip.geometry().block_count && chip.next_page(BlockNumber(log.block + 1)) > 0) ++log.block;
    for (; written < pages; ++written) {
      const Status s = log.append();
      if (s.code() == StatusCode::power_lost) break;
      if (!s.is_ok()) return fail(s);
    }
    cut = faulty.cut();
    fmt::print("wrote {} pages and erased {} blocks ({:.1f} ms of simulated chip time)\n", written, log.erases,
               static_cast<double>(clock.now_ns()) / 1e6);
    fmt::print("{}\n", cut.describe());
  }

  auto store = open_image_store(paths.image, ImageAccess::read_only);
  if (!store.is_ok()) return fail(store.status());
  SimClock clock;
  SimulatedChip chip(store.value(), superblock->superblock.latency, clock);
  const Geometry& g = chip.geometry();
  std::uint64_t intact = 0, lost = 0, expected = 0, damaged = 0;
  std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
  for (std::uint64_t p = 0; p < g.page_count(); ++p) {
    if (!chip.is_programmed(Ppn(p))) continue;
    if (Status s = chip.read(Ppn(p), 1, data, oob); !s.is_ok()) return fail(s);
    auto record = format::decode_oob(oob);
    const bool verifies = record.is_ok() && format::xxh3(data) == record->data_hash;
    if (!verifies) ++damaged;
    if (!acknowledged[p]) continue;
    ++expected;
    if (verifies && record->sequence == acknowledged[p]->sequence && record->data_hash == acknowledged[p]->data_hash) {
      ++intact;
    } else {
      ++lost;
    }
  }
  fmt::print("after reopening the image:\n");
  fmt::print("  {} of {} acknowledged pages intact ({:.2f}%)\n", intact, expected,
             expected == 0 ? 100.0 : 100.0 * static_cast<double>(intact) / static_cast<double>(expected));
  fmt::print("  {} damaged page(s) caught by checksum (the operation in flight was {})\n", damaged,
             cut.torn ? "torn" : "dropped");
  fmt::print("  {} acknowledged pages lost\n", lost);
  return lost == 0 ? 0 : 2;
}
