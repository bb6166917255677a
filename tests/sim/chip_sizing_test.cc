// Chip sizing: the smallest chip whose logical space holds the compacted span at the
// utilization, and the plan that gives every compared configuration its own chip.
#include <catch2/catch.hpp>

#include <sstream>

#include "flashdir/ftl/ftl.h"
#include "flashdir/sim/chip_sizing.h"
#include "flashdir/sim/simulation.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

std::uint64_t logical_of(Geometry shape, std::uint64_t blocks, std::uint16_t op) {
  shape.block_count = blocks;
  auto logical = Ftl::logical_pages_for(shape, op);
  return logical.is_ok() ? *logical : 0;
}

Trace synthetic(const char* text) {
  auto spec = parse_synthetic(text);
  REQUIRE(spec.is_ok());
  auto trace = generate(*spec);
  REQUIRE(trace.is_ok());
  return std::move(trace).value();
}

std::vector<Variant> variants(const SimConfig& base, std::vector<const char*> axes) {
  std::vector<CompareAxis> parsed;
  for (const char* text : axes) {
    auto axis = parse_compare_axis(text);
    REQUIRE(axis.is_ok());
    parsed.push_back(*axis);
  }
  auto expanded = expand_compare(base, parsed);
  REQUIRE(expanded.is_ok());
  return std::move(expanded).value();
}

}  // namespace

TEST_CASE("chip sizing: logical pages needed for a footprint at a utilization", "[sim][sizing]") {
  CHECK(logical_pages_needed(900, 0.9) == 1000);
  CHECK(logical_pages_needed(901, 0.9) == 1002);
  CHECK(logical_pages_needed(1000, 1.0) == 1000);
  CHECK(logical_pages_needed(1, 0.5) == 2);
  CHECK(logical_pages_needed(0, 0.5) == 0);
  for (std::uint64_t f : {7u, 128u, 1000u, 123457u}) {
    for (double u : {0.1, 0.33, 0.5, 0.7, 0.9, 0.95, 1.0}) {
      const std::uint64_t l = logical_pages_needed(f, u);
      CHECK(static_cast<double>(l) * u >= static_cast<double>(f));
      CHECK(static_cast<double>(l - 1) * u < static_cast<double>(f));
    }
  }
}

TEST_CASE("chip sizing: the smallest chip that holds the logical pages", "[sim][sizing]") {
  for (std::uint32_t page : {2048u, 4096u, 16384u}) {
    for (std::uint32_t per_block : {32u, 128u}) {
      for (std::uint16_t op : {std::uint16_t{0}, std::uint16_t{70}, std::uint16_t{250}}) {
        Geometry shape;
        shape.page_size_bytes = page;
        shape.pages_per_block = per_block;
        for (std::uint64_t wanted :
             {std::uint64_t{1}, std::uint64_t{5'000}, std::uint64_t{77'777}, std::uint64_t{1'000'000}}) {
          INFO(page << " B pages, " << per_block << " per block, op " << op << ", " << wanted << " pages");
          auto blocks = blocks_for_logical_pages(shape, op, wanted);
          REQUIRE(blocks.is_ok());
          CHECK(*blocks >= kMinAutoBlocks);
          CHECK(logical_of(shape, *blocks, op) >= wanted);
          if (*blocks > kMinAutoBlocks) CHECK(logical_of(shape, *blocks - 1, op) < wanted);
        }
      }
    }
  }
  Geometry shape;
  auto too_big = blocks_for_logical_pages(shape, 70, std::uint64_t{1} << 33);
  REQUIRE_FALSE(too_big.is_ok());
  CHECK_THAT(too_big.status().message(), Catch::Contains("larger pages"));
}

TEST_CASE("plan: the footprint fits and the utilization is respected", "[sim][sizing]") {
  const Trace trace = synthetic("uniform,read=0.5,ws=24M,count=3000,seed=5");
  for (double utilization : {0.5, 0.8, 0.9, 1.0}) {
    SimConfig base;
    REQUIRE(base.set("utilization", std::to_string(utilization)).is_ok());
    auto plan = plan_simulation(trace, variants(base, {}));
    REQUIRE(plan.is_ok());
    REQUIRE(plan->runs.size() == 1);
    const PlannedRun& run = plan->runs[0];
    const CompactTrace& compact = plan->traces[run.trace_index];
    INFO("utilization " << utilization << ", footprint " << compact.footprint_pages() << ", logical "
                        << run.logical_pages << ", " << run.geometry.describe());
    CHECK(compact.footprint_pages() == 48 * 128);
    CHECK(run.logical_pages >= logical_pages_needed(compact.footprint_pages(), utilization));
    CHECK(run.utilization(compact) <= utilization);
    if (run.geometry.block_count > kMinAutoBlocks) {
      CHECK(logical_of(run.geometry, run.geometry.block_count - 1, 70) <
            logical_pages_needed(compact.footprint_pages(), utilization));
    }
  }
}

TEST_CASE("plan: each compared configuration gets the chip its own options need", "[sim][sizing]") {
  const Trace trace = synthetic("uniform,read=0.5,ws=24M,count=3000,seed=5");
  SimConfig base;
  auto plan = plan_simulation(trace, variants(base, {"op=7,25", "mapping=cftl,page"}));
  REQUIRE(plan.is_ok());
  REQUIRE(plan->runs.size() == 4);
  CHECK(plan->traces.size() == 1);  // one shape: compacted once
  for (const PlannedRun& run : plan->runs) {
    INFO(run.variant.label() << ": " << run.geometry.describe());
    const SimConfig& c = run.variant.config;
    // Every one at the asked utilization on the smallest chip that gives it...
    CHECK(run.utilization(plan->traces[0]) <= 0.9);
    CHECK(logical_of(run.geometry, run.geometry.block_count - 1, c.overprovision_permille) <
          logical_pages_needed(plan->traces[0].footprint_pages(), 0.9));
    // ... and the same chip as when it runs alone.
    auto alone = plan_simulation(trace, {Variant{{}, c}});
    REQUIRE(alone.is_ok());
    CHECK(alone->runs[0].geometry == run.geometry);
  }
  // More over-provisioning, a larger chip: op=7 is not left emptier on op=25's chip.
  CHECK(plan->runs[0].geometry.block_count < plan->runs[2].geometry.block_count);
  CHECK(plan->runs[0].utilization(plan->traces[0]) > 0.85);

  // Another page size: compacted again, each its own chip.
  auto pages = plan_simulation(trace, variants(base, {"page-size=4K,2K"}));
  REQUIRE(pages.is_ok());
  CHECK(pages->traces.size() == 2);
  for (const PlannedRun& run : pages->runs) CHECK(run.utilization(pages->traces[run.trace_index]) > 0.85);

  // Utilization sizes the chip: one chip per value.
  auto utilizations = plan_simulation(trace, variants(base, {"utilization=0.5,0.9"}));
  REQUIRE(utilizations.is_ok());
  CHECK(utilizations->runs[0].geometry.block_count > utilizations->runs[1].geometry.block_count);
}

TEST_CASE("plan: a given chip size must hold the footprint", "[sim][sizing]") {
  const Trace trace = synthetic("uniform,read=0.5,ws=24M,count=3000,seed=5");
  SimConfig base;
  REQUIRE(base.set("size", "64M").is_ok());
  auto fits = plan_simulation(trace, variants(base, {}));
  REQUIRE(fits.is_ok());
  CHECK(fits->runs[0].geometry.capacity_bytes() == 64ULL << 20);

  REQUIRE(base.set("size", "16M").is_ok());
  auto small = plan_simulation(trace, variants(base, {}));
  REQUIRE_FALSE(small.is_ok());
  // The message says what the figure is: the compacted span, in chunks, beside the pages touched.
  CHECK_THAT(small.status().message(),
             Catch::Contains("too small") && Catch::Contains("compacted span needs 6144 (48 chunks of 128 pages;") &&
                 Catch::Contains("touches 2419 pages"));

  REQUIRE(base.set("size", "64M").is_ok());
  auto compared = plan_simulation(trace, variants(base, {"op=7,60"}));
  REQUIRE_FALSE(compared.is_ok());
  CHECK_THAT(compared.status().message(), Catch::StartsWith("op=60: ") && Catch::Contains("too small"));

  REQUIRE(base.set("size", "1000K").is_ok());
  auto ragged = plan_simulation(trace, variants(base, {}));
  REQUIRE_FALSE(ragged.is_ok());
  CHECK_THAT(ragged.status().message(), Catch::Contains("whole number"));
}

TEST_CASE("plan: a smaller chunk brings the span, and the chip, down towards the pages touched", "[sim][sizing]") {
  // Requests of one page scattered over 64 MiB: each touches a chunk of its own.
  const Trace trace = synthetic("uniform,read=0.5,ws=64M,size=4K,count=200,seed=3");
  SimConfig base;
  auto plan = plan_simulation(trace, variants(base, {"chunk-pages=block,16,1"}));
  REQUIRE(plan.is_ok());
  REQUIRE(plan->traces.size() == 3);
  const CompactTrace& block = plan->traces[plan->runs[0].trace_index];
  const CompactTrace& sixteen = plan->traces[plan->runs[1].trace_index];
  const CompactTrace& page = plan->traces[plan->runs[2].trace_index];
  CHECK(block.pages_per_chunk == 128);
  CHECK(sixteen.pages_per_chunk == 16);
  CHECK(page.footprint_pages() == page.touched_pages);
  CHECK(block.touched_pages == page.touched_pages);
  CHECK(block.footprint_pages() > sixteen.footprint_pages());
  CHECK(sixteen.footprint_pages() > page.footprint_pages());
  CHECK(plan->runs[0].geometry.block_count > plan->runs[1].geometry.block_count);
  CHECK(plan->runs[1].geometry.block_count >= plan->runs[2].geometry.block_count);

  SimConfig too_big;
  REQUIRE(too_big.set("chunk-pages", "256").is_ok());
  auto refused = plan_simulation(trace, {Variant{{}, too_big}});
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("chunk-pages=256: a chunk is at most a block (128 pages)"));
}
