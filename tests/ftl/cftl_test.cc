// CFTL's conversions between page and block mapping, and the paper's stale-read bug.
#include <catch2/catch.hpp>

#include "ftl/ftl_core.h"
#include "ftl_harness.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

constexpr std::uint64_t kLbn = 5;

struct Rig {
  Geometry g = small_ftl_geometry();
  TestChip chip{Backend::memory, g};
  std::unique_ptr<Ftl> ftl;
  std::uint64_t P = g.pages_per_block;

  // `eager` by default: the background consolidation most of these tests drive needs it.
  explicit Rig(bool paper_bug = false, ConsolidationMode mode = ConsolidationMode::eager,
               format::RamPolicy ram = format::RamPolicy::tree, std::uint64_t ram_bytes = 4096) {
    FtlOptions options = small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy, ram);
    options.ram.budget_bytes = ram_bytes;
    options.reproduce_paper_cbmt_bug = paper_bug;
    options.cftl.consolidation = mode;
    auto made = Ftl::format(chip.chip(), chip.clock(), options);
    REQUIRE(made.is_ok());
    ftl = std::move(made).value();
  }

  // Writes the logical block page by page in a scattered order, interleaved with writes
  // elsewhere, so that its pages do not end up laid out in one block.
  void write_scattered(std::uint64_t version) {
    for (std::uint64_t i = 0; i < P; ++i) {
      const std::uint64_t lpn = kLbn * P + (i * 7) % P;
      REQUIRE_OK(ftl->write(Lpn(lpn), 1, run_data(g, lpn, 1, version)));
      REQUIRE_OK(ftl->write(Lpn(400 + i), 1, run_data(g, 400 + i, 1, version)));
    }
    REQUIRE_OK(ftl->flush());  // out of the write buffer: only pages on flash can be block-mapped
  }

  // Writes `count` pages from `lpn` straight to the cold frontier (forced: past the write
  // buffer, in request order), so that where they land follows from what was written before.
  void write_in_order(std::uint64_t lpn, std::uint32_t count, std::uint64_t version) {
    REQUIRE_OK(ftl->write(Lpn(lpn), count, run_data(g, lpn, count, version), WriteHint::cold, Durability::forced));
  }

  std::uint64_t read_version(std::uint64_t lpn) {
    std::vector<std::uint8_t> page(g.page_size_bytes);
    REQUIRE_OK(ftl->read(Lpn(lpn), 1, page));
    return version_of(lpn, page);
  }

  // Requests that do not touch the logical block, for as long as the detector needs to call
  // it write-cold (an aging period: 4 x pages per block requests by default).
  void quiet_period() {
    std::vector<std::uint8_t> page(g.page_size_bytes);
    // One page of a different logical block each time: nothing else gets read-hot.
    const std::uint64_t blocks = ftl->logical_pages() / P;
    for (std::uint64_t r = 0; r < 4 * P + 1; ++r) {
      const std::uint64_t lbn = (kLbn + 1 + r) % blocks == kLbn ? kLbn + 1 : (kLbn + 1 + r) % blocks;
      REQUIRE_OK(ftl->read(Lpn(lbn * P), 1, page));
    }
  }

  // Reads the whole logical block `times` times, each time as one request.
  void read_block(int times) {
    std::vector<std::uint8_t> data(P * g.page_size_bytes);
    for (int t = 0; t < times; ++t) REQUIRE_OK(ftl->read(Lpn(kLbn * P), static_cast<std::uint32_t>(P), data));
  }
};

}  // namespace

TEST_CASE("cftl: a read-hot, write-cold logical block is consolidated and served from the CBMT", "[ftl][cftl]") {
  Rig rig;
  rig.write_scattered(1);
  rig.read_block(static_cast<int>(rig.P) + 2);
  CHECK(rig.ftl->stats().conversions_to_block == 0);  // read-hot, but written too recently
  rig.quiet_period();
  rig.read_block(static_cast<int>(rig.P) + 2);  // enough requests for the background step
  const FtlStats stats = rig.ftl->stats();
  CHECK(stats.conversions_to_block == 1);
  CHECK(stats.consolidation_copies == rig.P);
  const std::uint64_t hits_before = stats.cbmt_hits;
  rig.read_block(1);
  CHECK(rig.ftl->stats().cbmt_hits == hits_before + rig.P);  // every page from the block mapping
  for (std::uint64_t i = 0; i < rig.P; ++i) CHECK(rig.read_version(kLbn * rig.P + i) == 1);
}

TEST_CASE("cftl: a logical block laid out whole is block-mapped for free when it turns read-hot after its "
          "mapping is in RAM",
          "[ftl][cftl]") {
  // RAM for the whole mapping: no translation page is loaded twice, so only the mapping already
  // held can show the layout (a mounted cache's device RAM is a sixteenth of its size).
  const auto ram = GENERATE(from_range(std::begin(kRamPolicies), std::end(kRamPolicies)));
  INFO("RAM policy " << format::ram_policy_name(ram));
  Rig rig(false, ConsolidationMode::gc, ram, 64 << 10);
  rig.write_in_order(kLbn * rig.P, static_cast<std::uint32_t>(rig.P), 1);  // the chip's first block, from page 0
  CHECK(rig.read_version(kLbn * rig.P) == 1);  // its mapping into RAM, before it is read-hot
  rig.quiet_period();
  REQUIRE(rig.ftl->stats().conversions_to_block == 0);
  rig.read_block(1);  // read-hot now: the mapping in RAM shows it laid out whole
  FtlStats stats = rig.ftl->stats();
  CHECK(stats.conversions_to_block == 1);
  CHECK(stats.consolidation_copies == 0);
  rig.read_block(1);
  CHECK(rig.ftl->stats().cbmt_hits - stats.cbmt_hits == rig.P);
  for (std::uint64_t i = 0; i < rig.P; ++i) CHECK(rig.read_version(kLbn * rig.P + i) == 1);
}

TEST_CASE("cftl: a logical block found not laid out whole is looked at again once it is written", "[ftl][cftl]") {
  const auto ram = GENERATE(from_range(std::begin(kRamPolicies), std::end(kRamPolicies)));
  INFO("RAM policy " << format::ram_policy_name(ram));
  Rig rig(false, ConsolidationMode::gc, ram, 64 << 10);
  const std::uint64_t first = kLbn * rig.P;
  const auto P = static_cast<std::uint32_t>(rig.P);
  rig.write_in_order(400, 1, 1);
  rig.write_in_order(first, P, 1);  // pages 1..P-1 of one block and page 0 of the next
  rig.quiet_period();
  rig.read_block(2);
  REQUIRE(rig.ftl->stats().conversions_to_block == 0);
  rig.write_in_order(401, P - 1, 1);  // the frontier at a block's page 0 again
  rig.write_in_order(first, P, 2);    // laid out whole now
  rig.quiet_period();
  rig.read_block(1);
  CHECK(rig.ftl->stats().conversions_to_block == 1);
  CHECK(rig.ftl->stats().consolidation_copies == 0);
  for (std::uint64_t i = 0; i < rig.P; ++i) CHECK(rig.read_version(first + i) == 2);
}

TEST_CASE("cftl: a write to a block-mapped block is never read stale", "[ftl][cftl]") {
  const bool paper_bug = GENERATE(false, true);
  INFO((paper_bug ? "the paper's Algorithm 1" : "the fixed order"));
  Rig rig(paper_bug);
  rig.write_scattered(1);
  rig.quiet_period();
  rig.read_block(static_cast<int>(rig.P) + 2);
  REQUIRE(rig.ftl->stats().conversions_to_block == 1);

  const std::uint64_t lpn = kLbn * rig.P + 3;
  REQUIRE_OK(rig.ftl->write(Lpn(lpn), 1, run_data(rig.g, lpn, 1, 2)));
  REQUIRE_OK(rig.ftl->flush());  // past the write buffer, so that the read must translate
  if (paper_bug) {
    // Algorithm 1 serves the read from the CBMT, which still points at the old page.
    CHECK(rig.read_version(lpn) == 1);
    CHECK(rig.ftl->stats().conversions_to_page == 0);
  } else {
    CHECK(rig.read_version(lpn) == 2);
    CHECK(rig.ftl->stats().conversions_to_page == 1);  // block -> page: the CBMT entry is gone
    CHECK(rig.read_version(lpn + 1) == 1);
  }
}

TEST_CASE("cftl: a logical block with unwritten pages is never block-mapped", "[ftl][cftl]") {
  Rig rig;
  rig.write_scattered(1);
  REQUIRE_OK(rig.ftl->trim(Lpn(kLbn * rig.P + 9), 1));
  rig.quiet_period();
  rig.read_block(static_cast<int>(rig.P) + 2);
  CHECK(rig.ftl->stats().conversions_to_block == 0);
  CHECK(rig.read_version(kLbn * rig.P + 9) == 0);
}

TEST_CASE("cftl: GC consolidates a read-hot, write-cold logical block as its mode says", "[ftl][cftl]") {
  // A victim holding `held` pages of logical block kLbn and nothing else valid; every other
  // closed block nearly full, so that greedy GC takes that victim first.
  const auto mode = GENERATE(ConsolidationMode::off, ConsolidationMode::gc, ConsolidationMode::eager);
  const std::uint32_t held = GENERATE(8u, 7u);  // of 16 pages
  INFO("consolidation " << consolidation_mode_name(mode) << ", the victim holds " << held << " pages");
  const Geometry g = small_ftl_geometry();
  const std::uint32_t P = g.pages_per_block;
  TestChip chip(Backend::memory, g);
  FtlOptions options = small_cache_options(format::MappingScheme::cftl, format::GcPolicy::greedy);
  options.ram.budget_bytes = 64 << 10;  // every mapping entry cached: no translation-page garbage
  options.ram.policy = format::RamPolicy::static_split;
  options.ram.static_mapping_percent = 100;  // no write buffer: each write is programmed in order
  options.cftl.consolidation = mode;
  auto made = Ftl::format(chip.chip(), chip.clock(), options);
  REQUIRE_OK(made);
  Ftl& ftl = **made;
  const std::uint64_t L = ftl.logical_pages();
  const std::uint64_t first = kLbn * P;
  const std::uint64_t filler = 200;  // shares the victim with the logical block, then overwritten
  auto write = [&](std::uint64_t lpn, std::uint32_t count, std::uint64_t version) {
    REQUIRE_OK(ftl.write(Lpn(lpn), count, run_data(g, lpn, count, version)));
  };

  write(filler, P - held, 1);
  write(first, held, 1);
  write(first + held, P - held, 1);
  for (std::uint64_t lpn = 0; lpn < L; lpn += P) {
    if (lpn == first || lpn / P == filler / P) continue;
    write(lpn, static_cast<std::uint32_t>(std::min<std::uint64_t>(P, L - lpn)), 1);
  }
  for (std::uint64_t lpn = filler / P * P; lpn < filler / P * P + P; ++lpn) {
    if (lpn >= filler + (P - held) || lpn < filler) write(lpn, 1, 1);
  }
  write(filler, P - held, 2);  // the victim now holds only the logical block's pages
  std::vector<std::uint8_t> block(P * g.page_size_bytes);
  for (int i = 0; i < 4; ++i) REQUIRE_OK(ftl.read(Lpn(first), P, block));  // read-hot; written long ago

  // Garbage spread thinly over the other blocks until GC runs.
  std::uint32_t first_victim_valid = 0;  // as greedy sees the block it will take first
  for (std::uint64_t n = 0; ftl.stats().gc_runs == 0; ++n) {
    REQUIRE(n < L);
    const auto victim = ftl.core().gc_policy().select_victim(0);
    REQUIRE(victim);
    first_victim_valid = ftl.core().blocks().info(*victim).valid_pages;
    const std::uint64_t lpn = ((n + 1) * P + n / (L / P)) % L;
    if (lpn / P != kLbn) write(lpn, 1, 3);
  }
  CHECK(first_victim_valid == held);  // the intended victim, whatever the mode decided
  const bool converted = mode == ConsolidationMode::eager || (mode == ConsolidationMode::gc && 2 * held >= P);
  CHECK(ftl.stats().conversions_to_block == (converted ? 1u : 0u));
  CHECK(ftl.stats().consolidation_copies == (converted ? P : 0u));
  const std::uint64_t hits_before = ftl.stats().cbmt_hits;
  REQUIRE_OK(ftl.read(Lpn(first), P, block));
  CHECK(ftl.stats().cbmt_hits - hits_before == (converted ? P : 0u));
  for (std::uint32_t i = 0; i < P; ++i) {
    CHECK(version_of(first + i, ConstByteSpan(block).subspan(i * g.page_size_bytes, g.page_size_bytes)) == 1);
  }
}
