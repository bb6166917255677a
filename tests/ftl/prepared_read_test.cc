// Reads in three steps (Ftl::prepare_read, read_prepared, finish_read): the same bytes and the
// same statistics as a plain read, and a block that GC erases between the steps is noticed and
// its pages read again where they went.
#include <catch2/catch.hpp>

#include "flashdir/random.h"
#include "ftl/ftl_core.h"
#include "ftl/ram/ram_manager.h"
#include "ftl_harness.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// The same requests go to two FTLs on identical chips (SLC timing: reads cost simulated time).
struct Twin {
  Twin(Backend backend, const FtlOptions& options)
      : chip(backend, small_ftl_geometry(), LatencyProfile::of(LatencyPreset::slc)) {
    auto formatted = Ftl::format(chip.chip(), chip.clock(), options);
    REQUIRE_OK(formatted);
    ftl = std::move(formatted).value();
  }
  TestChip chip;
  std::unique_ptr<Ftl> ftl;
};

}  // namespace

TEST_CASE("a read in three steps returns what a plain read does, with the same statistics", "[ftl]") {
  const auto backend = GENERATE(Backend::memory, Backend::image);
  const auto scheme = GENERATE(format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page);
  INFO("backend " << backend_label(backend) << ", scheme " << format::mapping_scheme_name(scheme));
  const FtlOptions options = small_cache_options(scheme, format::GcPolicy::dual_greedy);
  Twin plain(backend, options), stepped(backend, options);
  const Geometry g = small_ftl_geometry();
  const std::uint64_t lpns = plain.ftl->logical_pages();
  const std::uint64_t seed = test_seed(7);
  INFO(replay_command(seed));
  SeededRandom random(seed);
  PreparedRead prepared;
  std::uint64_t version = 0;
  for (int round = 0; round < 600; ++round) {
    const std::uint64_t first = random.uniform(lpns - 8);
    const auto count = static_cast<std::uint32_t>(random.between(1, 8));
    if (random.one_in(2)) {  // writes (some stay in the device RAM), trims: pages of every kind
      ++version;
      const auto data = run_data(g, first, count, version);
      if (random.one_in(8)) {
        REQUIRE_OK(plain.ftl->trim(Lpn(first), count));
        REQUIRE_OK(stepped.ftl->trim(Lpn(first), count));
      } else {
        REQUIRE_OK(plain.ftl->write(Lpn(first), count, data));
        REQUIRE_OK(stepped.ftl->write(Lpn(first), count, data));
      }
      continue;
    }
    std::vector<std::uint8_t> expected(std::size_t{count} * g.page_size_bytes), got(expected.size(), 0xAA);
    REQUIRE_OK(plain.ftl->read(Lpn(first), count, expected));
    REQUIRE_OK(stepped.ftl->prepare_read(Lpn(first), count, got, prepared));
    REQUIRE(prepared.concurrent());
    stepped.ftl->read_prepared(prepared, got);
    REQUIRE_OK(stepped.ftl->finish_read(prepared, got));
    CHECK(prepared.redone_runs() == 0);
    REQUIRE(got == expected);
  }
  CHECK(plain.ftl->stats().read_requests > 200);
  CHECK(plain.ftl->stats().chip_page_reads > 0);
  CHECK(plain.ftl->stats() == stepped.ftl->stats());
  CHECK(plain.chip.clock().now_ns() == stepped.chip.clock().now_ns());
  CHECK(plain.chip.chip().counters().page_reads == stepped.chip.chip().counters().page_reads);
  CHECK(plain.chip.chip().counters().busy_ns == stepped.chip.chip().counters().busy_ns);
}

TEST_CASE("a prepared read whose block GC erases before it finishes reads the pages where they went", "[ftl]") {
  // Read before the erase, the chip pages verify (they were right then); read after it, they
  // fail verification. Either way the erase count tells, and the pages are read again.
  const bool read_before_gc = GENERATE(true, false);
  INFO((read_before_gc ? "chip read before GC" : "chip read after GC"));
  const Geometry g = small_ftl_geometry();
  TestChip chip(Backend::memory, g, LatencyProfile::of(LatencyPreset::slc));
  auto ftl = Ftl::format(chip.chip(), chip.clock(), small_cache_options(format::MappingScheme::page, format::GcPolicy::greedy));
  REQUIRE_OK(ftl);
  const std::uint64_t lpns = (*ftl)->logical_pages();
  // Every logical page written once, then LPN 0's block is made the cheapest victim: the other
  // pages of the block are overwritten.
  for (std::uint64_t lpn = 0; lpn < lpns; lpn += g.pages_per_block) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(g.pages_per_block, lpns - lpn));
    REQUIRE_OK((*ftl)->write(Lpn(lpn), count, run_data(g, lpn, count, 1), WriteHint::none, Durability::forced));
  }
  auto ppn = (*ftl)->core().ram().lookup(Lpn(0), ftl::Access::internal);
  REQUIRE_OK(ppn);
  const BlockNumber block = g.block_of(Ppn(*ppn));
  const std::uint32_t erases = chip.chip().erase_count(block);

  std::vector<std::uint8_t> data(g.page_size_bytes, 0xAA);
  PreparedRead read;
  REQUIRE_OK((*ftl)->prepare_read(Lpn(0), 1, data, read));
  REQUIRE(read.concurrent());
  if (read_before_gc) (*ftl)->read_prepared(read, data);
  // What other threads would do meanwhile: overwrites until GC collects the block.
  REQUIRE_OK((*ftl)->write(Lpn(1), g.pages_per_block - 1, run_data(g, 1, g.pages_per_block - 1, 2), WriteHint::none,
                           Durability::forced));
  SeededRandom random(test_seed(11));
  for (int i = 0; i < 20000 && chip.chip().erase_count(block) == erases; ++i) {
    const std::uint64_t lpn = random.between(g.pages_per_block, lpns - 1);
    REQUIRE_OK((*ftl)->write(Lpn(lpn), 1, run_data(g, lpn, 1, 3), WriteHint::none, Durability::forced));
  }
  REQUIRE(chip.chip().erase_count(block) != erases);
  if (!read_before_gc) (*ftl)->read_prepared(read, data);
  REQUIRE_OK((*ftl)->finish_read(read, data));
  CHECK(read.redone_runs() == 1);
  CHECK(version_of(0, data) == 1);
  // Finished once only.
  CHECK((*ftl)->finish_read(read, data).code() == StatusCode::invalid_argument);
}

TEST_CASE("a read in three steps on a chip without concurrent reads does its chip reads in finish_read", "[ftl]") {
  const Geometry g = small_ftl_geometry();
  TestChip chip(Backend::memory, g);
  FaultyChip faulty(chip.chip(), FaultPlan{});
  auto ftl = Ftl::format(faulty, chip.clock(), small_cache_options(format::MappingScheme::page, format::GcPolicy::greedy));
  REQUIRE_OK(ftl);
  REQUIRE_OK((*ftl)->write(Lpn(5), 2, run_data(g, 5, 2, 4), WriteHint::none, Durability::forced));
  std::vector<std::uint8_t> data(2 * g.page_size_bytes, 0xAA);
  PreparedRead read;
  REQUIRE_OK((*ftl)->prepare_read(Lpn(5), 2, data, read));
  CHECK_FALSE(read.concurrent());
  const std::uint64_t reads = chip.chip().counters().page_reads;
  (*ftl)->read_prepared(read, data);
  CHECK(chip.chip().counters().page_reads == reads);  // nothing read: the fault injector sees every read
  REQUIRE_OK((*ftl)->finish_read(read, data));
  CHECK(chip.chip().counters().page_reads == reads + 2);
  CHECK(version_of(5, ConstByteSpan(data).first(g.page_size_bytes)) == 4);
  CHECK(version_of(6, ConstByteSpan(data).subspan(g.page_size_bytes)) == 4);
}
