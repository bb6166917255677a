// The memory a run needs, estimated before it is built, and the refusal above --max-memory.
#include <catch2/catch.hpp>

#include "flashdir/sim/memory_estimate.h"
#include "flashdir/sim/simulation.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

Trace one_request(std::uint64_t offset_bytes, std::uint64_t size_bytes) {
  Trace trace;
  trace.source = "test";
  trace.format = "disksim";
  trace.requests.push_back(IoRequest{0, IoRequest::Op::write, 0, offset_bytes, size_bytes});
  trace.devices.push_back(DeviceRange{0, 0, offset_bytes + size_bytes, 1});
  trace.writes = 1;
  trace.write_bytes = size_bytes;
  trace.footprint_bytes = offset_bytes + size_bytes;
  return trace;
}

SimulationPlan plan_for(const Trace& trace, const SimConfig& config) {
  auto plan = plan_simulation(trace, {Variant{{}, config}});
  REQUIRE(plan.is_ok());
  return std::move(plan).value();
}

}  // namespace

TEST_CASE("memory estimate: per page of the chip, with the data where the backend keeps it", "[sim][memory]") {
  SimConfig metadata;
  const Geometry small = metadata.geometry(1024);
  const Geometry large = metadata.geometry(4096);
  const MemoryEstimate a = estimate_run_memory(metadata, small, 100'000);
  const MemoryEstimate b = estimate_run_memory(metadata, large, 400'000);
  // Four times the chip: four times the chip store and the per-page bookkeeping.
  CHECK(b.chip_bytes == 4 * a.chip_bytes);
  CHECK(b.ftl_bytes - 2 * metadata.ram.budget_bytes == 4 * (a.ftl_bytes - 2 * metadata.ram.budget_bytes));
  CHECK(a.chip_bytes == small.page_count() * small.oob_size_bytes + small.block_count * kBytesPerBlock);
  CHECK(a.oracle_bytes == 0);
  CHECK(a.total() == a.chip_bytes + a.ftl_bytes + a.fixed_bytes);

  SimConfig memory = metadata;
  REQUIRE(memory.set("backend", "memory").is_ok());
  const MemoryEstimate m = estimate_run_memory(memory, small, 100'000);
  CHECK(m.chip_bytes == a.chip_bytes + small.capacity_bytes());
  REQUIRE(memory.set("power-cut", "every:1000").is_ok());
  CHECK(estimate_run_memory(memory, small, 100'000).oracle_bytes == 100'000 * 16);

  SimConfig more_ram = metadata;
  REQUIRE(more_ram.set("ram", "64M").is_ok());
  CHECK(estimate_run_memory(more_ram, small, 100'000).ftl_bytes > a.ftl_bytes + (64 << 20));
}

TEST_CASE("memory estimate: a sparse trace sizing a huge chip is refused naming the estimate and --max-memory",
          "[sim][memory]") {
  // `0 0 100 4294967295 0`: one write of 2 TiB at sector 100, which sizes a 2.4 TiB chip.
  const Trace huge = one_request(100 * 512, 4294967295ULL * 512);
  SimConfig config;
  REQUIRE(config.set("prefill", "off").is_ok());
  REQUIRE(config.set("age", "0").is_ok());
  const SimulationPlan plan = plan_for(huge, config);
  const std::uint64_t needed = plan_memory_bytes(plan);
  CHECK(needed > (std::uint64_t{64} << 30));  // tens of GiB: every page of the chip has an OOB record
  const Status refused = check_memory(plan, std::uint64_t{4} << 30);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.code() == StatusCode::invalid_argument);
  CHECK_THAT(refused.message(), Catch::StartsWith("the run needs an estimated ") &&
                                    Catch::Contains("TiB") && Catch::Contains("above --max-memory 4 GiB") &&
                                    Catch::Contains("raise --max-memory"));
  CHECK(check_memory(plan, needed).is_ok());
  CHECK_FALSE(check_memory(plan, needed - 1).is_ok());
}

TEST_CASE("memory estimate: a comparison needs its largest run, named in the message", "[sim][memory]") {
  const Trace trace = one_request(0, 64 << 20);
  SimConfig base;
  std::vector<Variant> variants;
  for (const char* backend : {"metadata", "memory"}) {
    SimConfig c = base;
    REQUIRE(c.set("backend", backend).is_ok());
    variants.push_back(Variant{{{"backend", backend}}, c});
  }
  auto plan = plan_simulation(trace, variants);
  REQUIRE(plan.is_ok());
  const MemoryEstimate memory =
      estimate_run_memory(plan->runs[1].variant.config, plan->runs[1].geometry, plan->runs[1].logical_pages);
  CHECK(plan_memory_bytes(*plan) == memory.total() + compact_trace_bytes(plan->traces[0]));
  const Status refused = check_memory(*plan, memory.total() / 2);
  CHECK_THAT(refused.message(), Catch::StartsWith("backend=memory: the run needs an estimated"));
}

TEST_CASE("memory estimate: the default limit is at most 4 GiB and not zero", "[sim][memory]") {
  CHECK(default_max_memory_bytes() > 0);
  CHECK(default_max_memory_bytes() <= std::uint64_t{4} << 30);
}
