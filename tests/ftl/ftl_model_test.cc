// Reference-model tests: seeded random workloads at 90-100% logical fill with heavy GC, for
// every mapping scheme and GC policy, against an oracle of the version each LPN holds.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "ftl_harness.h"
#include "support/seed.h"
#include "workload_driver.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

struct Combo {
  format::MappingScheme mapping;
  format::GcPolicy gc;
  Pattern pattern;
  format::RamPolicy ram;
};

std::vector<Combo> all_combos() {
  std::vector<Combo> combos;
  for (auto ram : kRamPolicies) {
    for (auto m : {format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page}) {
      for (auto gc : {format::GcPolicy::dual_greedy, format::GcPolicy::greedy, format::GcPolicy::cost_benefit}) {
        for (auto p : {Pattern::uniform, Pattern::zipf, Pattern::sequential}) combos.push_back({m, gc, p, ram});
      }
    }
  }
  return combos;
}

// Reads every LPN below `limit` and returns the first disagreement with the oracle.
std::string verify_all(Ftl& ftl, const Geometry& g, const Oracle& oracle, std::uint64_t limit) {
  std::vector<std::uint8_t> buffer(16 * g.page_size_bytes);
  for (std::uint64_t first = 0; first < limit; first += 16) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(16, limit - first));
    const ByteSpan span = ByteSpan(buffer).first(std::size_t{count} * g.page_size_bytes);
    if (Status s = ftl.read(Lpn(first), count, span); !s.is_ok()) return s.to_string();
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint64_t got = version_of(first + i, span.subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes));
      if (got != oracle.expected(first + i)) {
        return fmt::format("LPN {} reads version {}, expected {}", first + i, got, oracle.expected(first + i));
      }
    }
  }
  return {};
}

}  // namespace

TEST_CASE("every scheme and GC policy keeps the data under heavy GC", "[ftl][model]") {
  const SeededRuns runs(42);
  const Geometry g = small_ftl_geometry();
  const std::vector<Combo> combos = all_combos();
  for (std::uint64_t run = 0; run < combos.size(); ++run) {
    if (!runs.selected(run)) continue;
    const Combo& combo = combos[run];
    const std::uint64_t seed = runs.seed(run);
    INFO(fmt::format("{} + {} + {} + {} RAM, seed {}\nreplay: {}", format::mapping_scheme_name(combo.mapping),
                     format::gc_policy_name(combo.gc), pattern_name(combo.pattern), format::ram_policy_name(combo.ram),
                     seed, runs.replay_command(run)));
    SeededRandom random(seed);
    TestChip chip(Backend::memory, g);
    const FtlOptions options = small_cache_options(combo.mapping, combo.gc, combo.ram);
    auto ftl = Ftl::format(chip.chip(), chip.clock(), options);
    REQUIRE(ftl.is_ok());
    const std::uint64_t L = (*ftl)->logical_pages();
    const std::uint64_t used = L - random.uniform(L / 10 + 1);  // 90-100% of the logical space
    Oracle oracle(L);
    std::uint64_t version = 0;
    for (std::uint64_t lpn = 0; lpn < used; lpn += 8) {
      const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(8, used - lpn));
      auto v = (*ftl)->write(Lpn(lpn), count, run_data(g, lpn, count, version + 1));
      REQUIRE_OK(v);
      version = *v;
      oracle.wrote(lpn, count, version);
    }
    LpnPicker picker(combo.pattern, used, random);
    for (int op = 0; op < 2500; ++op) {
      const std::uint64_t choice = random.uniform(100);
      if (choice < 70) {
        const auto count = static_cast<std::uint32_t>(random.between(1, 4));
        const std::uint64_t lpn = picker.next(count);
        auto v = (*ftl)->write(Lpn(lpn), count, run_data(g, lpn, count, version + 1));
        REQUIRE_OK(v);
        REQUIRE(*v == version + 1);
        version = *v;
        oracle.wrote(lpn, count, version);
      } else if (choice < 90) {
        const auto count = static_cast<std::uint32_t>(random.between(1, 8));
        const std::uint64_t lpn = picker.next(count);
        std::vector<std::uint8_t> buffer(std::size_t{count} * g.page_size_bytes);
        REQUIRE((*ftl)->read(Lpn(lpn), count, buffer).is_ok());
        for (std::uint32_t i = 0; i < count; ++i) {
          INFO("LPN " << lpn + i);
          REQUIRE(version_of(lpn + i, ConstByteSpan(buffer).subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes)) ==
                  oracle.expected(lpn + i));
        }
      } else if (choice < 95) {
        const auto count = static_cast<std::uint32_t>(random.between(1, 2));
        const std::uint64_t lpn = picker.next(count);
        REQUIRE((*ftl)->trim(Lpn(lpn), count).is_ok());
        oracle.trimmed(lpn, count);
      } else {
        REQUIRE_OK((*ftl)->flush());
        oracle.flushed();
      }
      if (op == 1000) {  // a clean restart in the middle
        REQUIRE((*ftl)->close().is_ok());
        ftl = Ftl::open(chip.chip(), chip.clock(), options);
        REQUIRE(ftl.is_ok());
        REQUIRE((*ftl)->recovery().clean);
        REQUIRE(verify_all(**ftl, g, oracle, used) == "");
      }
    }
    const FtlStats stats = (*ftl)->stats();
    CHECK(stats.gc_runs > 20);
    CHECK(stats.write_amplification() > 1.0);
    if (combo.mapping != format::MappingScheme::page) CHECK(stats.translation_page_writes > 0);
    REQUIRE(verify_all(**ftl, g, oracle, used) == "");
    REQUIRE((*ftl)->flush().is_ok());
    oracle.flushed();
    REQUIRE((*ftl)->close().is_ok());
    ftl = Ftl::open(chip.chip(), chip.clock(), options);
    REQUIRE(ftl.is_ok());
    REQUIRE(verify_all(**ftl, g, oracle, used) == "");
  }
}

TEST_CASE("metadata-only chips replay workloads without data", "[ftl][model]") {
  const Geometry g = small_ftl_geometry();
  for (auto mapping : {format::MappingScheme::cftl, format::MappingScheme::dftl, format::MappingScheme::page}) {
    TestChip chip(Backend::metadata, g);
    auto ftl = Ftl::format(chip.chip(), chip.clock(), small_cache_options(mapping, format::GcPolicy::dual_greedy));
    REQUIRE(ftl.is_ok());
    SeededRandom random(7);
    const std::uint64_t L = (*ftl)->logical_pages();
    for (int op = 0; op < 6000; ++op) {
      const auto count = static_cast<std::uint32_t>(random.between(1, 4));
      const Lpn lpn(random.uniform(L - count));
      if (random.uniform(3) == 0) {
        REQUIRE((*ftl)->read(lpn, count, {}).is_ok());  // verifies every page's OOB record
      } else {
        REQUIRE_OK((*ftl)->write(lpn, count, {}));
      }
    }
    CHECK((*ftl)->stats().gc_runs > 0);
    REQUIRE((*ftl)->close().is_ok());
    REQUIRE(Ftl::open(chip.chip(), chip.clock(), small_cache_options(mapping, format::GcPolicy::greedy)).is_ok());
  }
}
