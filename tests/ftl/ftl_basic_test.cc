// The FTL's API on every mapping scheme: reads, writes, trims, bad requests, clean restarts,
// requests and flushes larger than the spare space.
#include <catch2/catch.hpp>

#include "flashdir/random.h"
#include "ftl_harness.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

const format::MappingScheme kSchemes[] = {format::MappingScheme::cftl, format::MappingScheme::dftl,
                                          format::MappingScheme::page};

std::uint64_t read_version(Ftl& ftl, const Geometry& g, std::uint64_t lpn) {
  std::vector<std::uint8_t> page(g.page_size_bytes);
  REQUIRE(ftl.read(Lpn(lpn), 1, page).is_ok());
  return version_of(lpn, page);
}

}  // namespace

TEST_CASE("an FTL reads back what was written", "[ftl]") {
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  const auto ram = GENERATE(from_range(std::begin(kRamPolicies), std::end(kRamPolicies)));
  INFO("scheme " << format::mapping_scheme_name(scheme) << ", RAM " << format::ram_policy_name(ram));
  const Geometry g = small_ftl_geometry();
  TestChip chip(Backend::memory, g);
  auto ftl = Ftl::format(chip.chip(), chip.clock(), small_cache_options(scheme, format::GcPolicy::dual_greedy, ram));
  REQUIRE(ftl.is_ok());
  CHECK((*ftl)->logical_pages() > 700);

  SECTION("unwritten pages read as zeros") { CHECK(read_version(**ftl, g, 5) == 0); }

  SECTION("a run, an overwrite in its middle, a trim") {
    auto v1 = (*ftl)->write(Lpn(10), 8, run_data(g, 10, 8, 1));
    REQUIRE(v1.is_ok());
    auto v2 = (*ftl)->write(Lpn(13), 2, run_data(g, 13, 2, 2));
    REQUIRE(v2.is_ok());
    CHECK(*v2 > *v1);
    CHECK((*ftl)->durable_seq() <= *v2);  // buffered writes are not durable yet
    REQUIRE_OK((*ftl)->flush());
    CHECK((*ftl)->durable_seq() == *v2);
    std::vector<std::uint8_t> buffer(8 * g.page_size_bytes);
    REQUIRE((*ftl)->read(Lpn(10), 8, buffer).is_ok());
    for (std::uint64_t i = 0; i < 8; ++i) {
      const std::uint64_t expected = (i == 3 || i == 4) ? 2 : 1;
      CHECK(version_of(10 + i, ConstByteSpan(buffer).subspan(i * g.page_size_bytes, g.page_size_bytes)) == expected);
    }
    REQUIRE((*ftl)->trim(Lpn(12), 3).is_ok());
    CHECK(read_version(**ftl, g, 12) == 0);
    CHECK(read_version(**ftl, g, 14) == 0);
    CHECK(read_version(**ftl, g, 15) == 1);
  }

  SECTION("requests outside the logical space or with wrong buffers are refused") {
    const std::uint64_t L = (*ftl)->logical_pages();
    std::vector<std::uint8_t> page(g.page_size_bytes);
    CHECK((*ftl)->read(Lpn(L), 1, page).code() == StatusCode::invalid_argument);
    CHECK((*ftl)->write(Lpn(L - 1), 2, run_data(g, L - 1, 2, 1)).status().code() == StatusCode::invalid_argument);
    CHECK((*ftl)->write(Lpn(0), 0, {}).status().code() == StatusCode::invalid_argument);
    CHECK((*ftl)->write(Lpn(0), 2, page).status().code() == StatusCode::invalid_argument);
    CHECK((*ftl)->trim(Lpn(L), 1).code() == StatusCode::invalid_argument);
  }

  SECTION("a clean close and open restores everything without replay") {
    for (std::uint64_t round = 1; round <= 5; ++round) {
      for (std::uint64_t lpn = 0; lpn < 300; lpn += 7) REQUIRE((*ftl)->write(Lpn(lpn), 3, run_data(g, lpn, 3, round)).is_ok());
    }
    REQUIRE((*ftl)->trim(Lpn(21), 1).is_ok());
    REQUIRE((*ftl)->close().is_ok());
    const auto before = (*ftl)->durable_seq();
    ftl = Status::io_error("dropped");
    auto reopened = Ftl::open(chip.chip(), chip.clock(), small_cache_options(scheme, format::GcPolicy::dual_greedy, ram));
    REQUIRE(reopened.is_ok());
    CHECK((*reopened)->recovery().clean);
    CHECK((*reopened)->durable_seq() == before);
    CHECK(read_version(**reopened, g, 0) == 5);
    CHECK(read_version(**reopened, g, 21) == 0);
    CHECK(read_version(**reopened, g, 22) == 5);
    CHECK(read_version(**reopened, g, 299) == 0);
    auto next = (*reopened)->write(Lpn(1), 1, run_data(g, 1, 1, 9));
    REQUIRE(next.is_ok());
    CHECK(*next > before);
  }
}

TEST_CASE("opening a chip without an FTL is refused", "[ftl]") {
  TestChip chip(Backend::memory, small_ftl_geometry());
  auto ftl = Ftl::open(chip.chip(), chip.clock(), FtlOptions{});
  REQUIRE_FALSE(ftl.is_ok());
  CHECK_THAT(ftl.status().message(), Catch::Contains("no valid FTL checkpoint"));
}

TEST_CASE("a chip too small for an FTL is refused", "[ftl]") {
  TestChip chip(Backend::memory, small_ftl_geometry(8));
  auto ftl = Ftl::format(chip.chip(), chip.clock(), FtlOptions{});
  REQUIRE_FALSE(ftl.is_ok());
  CHECK_THAT(ftl.status().message(), Catch::Contains("too few"));
}

TEST_CASE("requests and flushes larger than the spare space succeed on a full device", "[ftl]") {
  // Free space is asked of GC a block at a time: asked for all at once, a write of the whole
  // logical space or a flush of a buffer holding more pages than the spare blocks would fail
  // with "no space" although every page fits.
  const auto ram = GENERATE(from_range(std::begin(kRamPolicies), std::end(kRamPolicies)));
  INFO("RAM " << format::ram_policy_name(ram));
  const Geometry g = small_ftl_geometry();
  TestChip chip(Backend::memory, g);
  FtlOptions options = small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy, ram);
  options.ram.budget_bytes = 256 * g.page_size_bytes;  // 16 blocks of buffered data at most
  options.ram.static_mapping_percent = 10;
  auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  const std::uint64_t L = (*ftl)->logical_pages();
  REQUIRE_OK((*ftl)->write(Lpn(0), static_cast<std::uint32_t>(L), run_data(g, 0, static_cast<std::uint32_t>(L), 1)));

  SeededRandom random(11);
  std::vector<std::uint64_t> version(L, 1);
  for (std::uint64_t i = 0; i < 200; ++i) {
    const std::uint64_t lpn = random.uniform(L);
    auto v = (*ftl)->write(Lpn(lpn), 1, run_data(g, lpn, 1, 2 + i));
    REQUIRE_OK(v);
    version[lpn] = 2 + i;
  }
  REQUIRE_OK((*ftl)->flush());
  for (std::uint64_t lpn = 0; lpn < L; ++lpn) {
    INFO("LPN " << lpn);
    CHECK(read_version(**ftl, g, lpn) == version[lpn]);
  }
}

TEST_CASE("a flush writes back more translation pages than the GC reserve holds", "[ftl]") {
  // Translation-page writes draw on the GC reserve (three blocks): a flush that dirties more
  // than that must have GC make room first, or it fails with "no space" and stops the device.
  const auto scheme = GENERATE(format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page);
  const auto ram = GENERATE(from_range(std::begin(kRamPolicies), std::end(kRamPolicies)));
  INFO("scheme " << format::mapping_scheme_name(scheme) << ", RAM " << format::ram_policy_name(ram));
  const Geometry g = small_ftl_geometry(1024);
  TestChip chip(Backend::memory, g);
  FtlOptions options = small_cache_options(scheme, format::GcPolicy::dual_greedy, ram);
  options.ram.budget_bytes = 512 << 10;  // room for every translation page and the data below
  auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  const std::uint64_t L = (*ftl)->logical_pages();
  const std::uint64_t entries = g.page_size_bytes / 4;
  REQUIRE(L / entries > 4 * g.pages_per_block);  // translation pages: more than the reserve holds
  for (std::uint64_t lpn = 0; lpn < L; lpn += g.pages_per_block) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(g.pages_per_block, L - lpn));
    REQUIRE_OK((*ftl)->write(Lpn(lpn), count, run_data(g, lpn, count, 1)));
  }
  // Overwrites until GC keeps the free blocks at the reserve.
  SeededRandom random(5);
  std::vector<std::uint64_t> version(L, 1);
  for (std::uint64_t n = 0; (*ftl)->stats().gc_runs < 50; ++n) {
    REQUIRE(n < 10 * L);
    const std::uint64_t lpn = random.uniform(L);
    version[lpn] = 2 + n;
    REQUIRE_OK((*ftl)->write(Lpn(lpn), 1, run_data(g, lpn, 1, version[lpn])));
  }
  REQUIRE_OK((*ftl)->flush());
  // One page in every translation page, so that all of them are dirty at the next flush.
  for (std::uint64_t lpn = 3; lpn < L; lpn += entries) {
    version[lpn] = 1 + version.size() + lpn;
    REQUIRE_OK((*ftl)->write(Lpn(lpn), 1, run_data(g, lpn, 1, version[lpn])));
  }
  REQUIRE_OK((*ftl)->flush());
  for (std::uint64_t lpn = 0; lpn < L; lpn += 7) {
    INFO("LPN " << lpn);
    CHECK(read_version(**ftl, g, lpn) == version[lpn]);
  }
}

TEST_CASE("trims that dirty every translation page again and again have GC make room", "[ftl]") {
  // Found by a cache restart that trimmed every clean slot: each trim dirtied a translation
  // page, the small mapping cache wrote them back one after the other, and with no GC on the
  // trim path they used up the free blocks ("no free block left for the translation frontier").
  const auto scheme = GENERATE(format::MappingScheme::cftl, format::MappingScheme::dftl);
  const auto ram = GENERATE(from_range(std::begin(kRamPolicies), std::end(kRamPolicies)));
  INFO("scheme " << format::mapping_scheme_name(scheme) << ", RAM " << format::ram_policy_name(ram));
  const Geometry g = small_ftl_geometry(1024);
  TestChip chip(Backend::memory, g);
  auto ftl = Ftl::format(chip.chip(), chip.clock(), small_cache_options(scheme, format::GcPolicy::dual_greedy, ram));
  REQUIRE_OK(ftl);
  const std::uint64_t L = (*ftl)->logical_pages();
  const std::uint64_t entries = g.page_size_bytes / 4;
  for (std::uint64_t lpn = 0; lpn < L; lpn += g.pages_per_block) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(g.pages_per_block, L - lpn));
    REQUIRE_OK((*ftl)->write(Lpn(lpn), count, run_data(g, lpn, count, 1)));
  }
  REQUIRE_OK((*ftl)->flush());
  // Rounds of one trim per translation page: translation writes worth a quarter of the chip,
  // more than all its spare blocks.
  const std::uint64_t rounds = 64;
  REQUIRE(rounds < entries);
  REQUIRE(rounds * (L / entries) > g.block_count * g.pages_per_block / 4);
  for (std::uint64_t round = 0; round < rounds; ++round) {
    for (std::uint64_t lpn = round; lpn < L; lpn += entries) REQUIRE_OK((*ftl)->trim(Lpn(lpn), 1));
  }
  REQUIRE_OK((*ftl)->flush());
  CHECK((*ftl)->stats().gc_runs > 0);
  for (std::uint64_t lpn = 0; lpn < L; lpn += 3) {
    INFO("LPN " << lpn);
    CHECK(read_version(**ftl, g, lpn) == (lpn % entries < rounds ? 0u : 1u));
  }
}

TEST_CASE("a smallest chip at its minimum over-provisioning keeps room for GC under any write mix", "[ftl]") {
  // Found by fio on a 16 MiB cache: with 7% spare on 23 usable blocks, GC could free about
  // four and a half blocks, and a write asked for six (the reserve, both host frontiers, a
  // translation block): "garbage collection cannot free 6 blocks".
  const auto scheme = GENERATE(from_range(std::begin(kSchemes), std::end(kSchemes)));
  const auto gc = GENERATE(format::GcPolicy::dual_greedy, format::GcPolicy::greedy, format::GcPolicy::cost_benefit);
  const std::uint32_t pages_per_block = GENERATE(32u, 128u);
  INFO("scheme " << format::mapping_scheme_name(scheme) << ", GC " << format::gc_policy_name(gc) << ", "
                 << pages_per_block << " pages per block");
  const Geometry g{4096, 64, pages_per_block, 32};
  TestChip chip(Backend::memory, g);
  const std::uint64_t budget = GENERATE(64 * 4096, 4 << 20);
  FtlOptions options = small_cache_options(scheme, gc, format::RamPolicy::stack);
  options.ram.budget_bytes = budget;
  options.overprovision_permille = Ftl::minimum_overprovision_permille(g).value();
  INFO("over-provisioning " << options.overprovision_permille << " per mille");
  auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
  REQUIRE_OK(ftl);
  const std::uint64_t L = (*ftl)->logical_pages();
  SeededRandom random(17);
  std::vector<std::uint64_t> version(L, 0);
  const WriteHint hints[] = {WriteHint::none, WriteHint::hot, WriteHint::cold};
  for (std::uint64_t n = 1; n <= 40 * L / pages_per_block; ++n) {
    const auto count = static_cast<std::uint32_t>(1 + random.uniform(2 * pages_per_block));
    const std::uint64_t first = random.uniform(L - std::min<std::uint64_t>(count, L) + 1);
    const std::uint32_t run = static_cast<std::uint32_t>(std::min<std::uint64_t>(count, L - first));
    INFO("request " << n << ": " << run << " pages at " << first);
    const Durability durability = random.uniform(4) == 0 ? Durability::forced : Durability::buffered;
    REQUIRE_OK((*ftl)->write(Lpn(first), run, run_data(g, first, run, n), hints[random.uniform(3)], durability));
    for (std::uint32_t i = 0; i < run; ++i) version[first + i] = n;
    if (n % 7 == 0) REQUIRE_OK((*ftl)->flush());
  }
  for (std::uint64_t lpn = 0; lpn < L; ++lpn) {
    INFO("LPN " << lpn);
    CHECK(read_version(**ftl, g, lpn) == version[lpn]);
  }
}
