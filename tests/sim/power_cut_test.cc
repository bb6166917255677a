// Torture mode: the oracle of the durability contract, runs cut every N operations or at
// seeded random ones on every mapping scheme, and the verdict and its reproduce command.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "flashdir/sim/report.h"
#include "flashdir/sim/runner.h"
#include "flashdir/sim/simulation.h"
#include "sim/durability_oracle.h"
#include "support/run_command.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::sim;
using flashdir::sim::detail::DurabilityOracle;

namespace {

Trace synthetic(const std::string& text) {
  auto spec = parse_synthetic(text);
  REQUIRE(spec.is_ok());
  auto trace = generate(*spec);
  REQUIRE(trace.is_ok());
  return std::move(trace).value();
}

SimConfig with(std::initializer_list<std::pair<const char*, const char*>> settings) {
  SimConfig config;
  for (const auto& [key, value] : settings) {
    INFO(key << "=" << value);
    REQUIRE(config.set(key, value).is_ok());
  }
  return config;
}

RunResult run(const Trace& trace, const SimConfig& config) {
  auto plan = plan_simulation(trace, {Variant{{}, config}});
  INFO(plan.status().to_string());
  REQUIRE(plan.is_ok());
  const PlannedRun& planned = plan->runs[0];
  auto result = run_configuration(planned.variant.config, planned.geometry, plan->traces[planned.trace_index]);
  INFO(result.status().to_string());
  REQUIRE(result.is_ok());
  return std::move(result).value();
}

// The verdict's violations, for a failure message.
std::string violations(const PowerCutVerdict& v) {
  std::string text;
  for (const auto& violation : v.violations) text += "after cut " + std::to_string(violation.cut) + ": " + violation.what + "\n";
  return text;
}

// Small pages keep the oracle's full read-back after every cut cheap.
constexpr const char* kWorkload = "zipf:0.9,read=0.3,ws=3M,size=8K,count=4000,seed=4";

}  // namespace

TEST_CASE("durability oracle: the newest durable version is the floor, newer acknowledged ones may show",
          "[sim][powercut]") {
  DurabilityOracle oracle(10);
  CHECK(oracle.expected(3) == 0);
  CHECK(oracle.allows(3, 0));
  oracle.wrote(2, 3, /*version=*/1, /*sequence=*/100);  // LPNs 2..4
  oracle.wrote(3, 1, 2, 101);
  oracle.wrote(4, 2, 3, 102);  // LPNs 4, 5
  CHECK(oracle.expected(3) == 2);
  CHECK(oracle.expected(4) == 3);
  CHECK(oracle.pending_writes() == 3);
  // Nothing durable yet: the old state or any acknowledged version of the LPN.
  CHECK(oracle.allows(3, 0));
  CHECK(oracle.allows(3, 1));
  CHECK(oracle.allows(3, 2));
  CHECK_FALSE(oracle.allows(3, 3));  // version 3 never covered LPN 3
  CHECK_FALSE(oracle.allows(6, 1));

  oracle.durable(101);  // versions 1 and 2 are durable
  CHECK(oracle.pending_writes() == 1);
  CHECK_FALSE(oracle.allows(3, 0));  // older than the newest durable version
  CHECK_FALSE(oracle.allows(3, 1));
  CHECK(oracle.allows(3, 2));
  CHECK(oracle.allows(4, 1));  // LPN 4's durable version is 1 ...
  CHECK(oracle.allows(4, 3));  // ... and 3 was acknowledged after it
  CHECK_FALSE(oracle.allows(4, 0));
  CHECK(oracle.describe(4) == "durable version 1; acknowledged since: 3");

  // The write in flight may land or not.
  oracle.in_flight(7, 2, 4);
  CHECK(oracle.allows(8, 4));
  CHECK(oracle.allows(8, 0));
  CHECK_FALSE(oracle.allows(9, 4));
  CHECK(oracle.describe(8) == "durable version 0; nothing acknowledged since; in flight: 4");

  // What recovery shows becomes the state: LPN 4 fell back to its durable version.
  oracle.settle(4, 1);
  oracle.settled_all();
  CHECK(oracle.expected(4) == 1);
  CHECK(oracle.allows(4, 1));
  CHECK_FALSE(oracle.allows(4, 3));
  CHECK_FALSE(oracle.allows(8, 4));
  CHECK(oracle.pending_writes() == 0);
}

TEST_CASE("durability oracle: pages carry their LPN and version", "[sim][powercut]") {
  std::vector<std::uint8_t> page(512, 0);
  CHECK(detail::read_stamp(page).version == 0);
  detail::stamp_page(page, 123456789012ULL, 42);
  const detail::PageIdentity id = detail::read_stamp(page);
  CHECK(id.lpn == 123456789012ULL);
  CHECK(id.version == 42);
  CHECK(page[0] == (123456789012ULL & 0xff));  // little-endian
}

TEST_CASE("torture mode: cuts every N operations on every mapping scheme keep the contract", "[sim][powercut]") {
  const Trace trace = synthetic(kWorkload);
  for (const char* mapping : {"cftl", "dftl", "page"}) {
    INFO(mapping);
    const SimConfig config = with({{"backend", "memory"}, {"page-size", "512"}, {"pages-per-block", "32"},
                                   {"mapping", mapping}, {"ram", "16K"}, {"power-cut", "every:3000"}});
    const RunResult r = run(trace, config);
    REQUIRE(r.power_cuts);
    const PowerCutVerdict& v = *r.power_cuts;
    INFO(violations(v));
    CHECK(v.violation_count == 0);
    CHECK_FALSE(v.stopped);
    CHECK(v.cuts >= 5);
    // Every recovery that was not itself cut read every LPN back.
    CHECK(v.checked_lpns == (v.cuts - v.recovery_cuts) * r.logical_pages);
    CHECK(v.checked_read_pages > 0);
    CHECK(v.checked_read_pages <= r.stats.read_pages);
    // The replay went on to the end after every cut.
    CHECK(r.requests == trace.request_count());
    CHECK(r.stats.write_requests > 0);
    CHECK(r.stats.gc_runs > 0);  // the cuts hit a device under garbage collection
  }
}

TEST_CASE("torture mode: a cut point below what recovery needs still makes progress", "[sim][powercut]") {
  const Trace trace = synthetic("uniform,read=0.5,ws=1M,size=4K,count=300,seed=9");
  const SimConfig config = with({{"backend", "memory"}, {"page-size", "512"}, {"pages-per-block", "16"},
                                 {"ram", "8K"}, {"power-cut", "every:40"}});
  const RunResult r = run(trace, config);
  REQUIRE(r.power_cuts);
  INFO(violations(*r.power_cuts));
  CHECK(r.power_cuts->violation_count == 0);
  CHECK(r.power_cuts->recovery_cuts > 0);  // recoveries were cut, some twice in a row ...
  CHECK(r.requests == trace.request_count());  // ... and the replay still reached its end
}

TEST_CASE("torture mode: seeded random cuts, reproducible from the seed", "[sim][powercut]") {
  const Trace trace = synthetic(kWorkload);
  flashdir::testing::SeededRuns runs(7000);
  const char* const mappings[] = {"cftl", "dftl", "page"};
  const char* const gcs[] = {"dual-greedy", "greedy", "cost-benefit"};
  for (std::uint64_t i = 0; i < 3; ++i) {
    if (!runs.selected(i)) continue;
    const std::string seed = std::to_string(runs.seed(i));
    SimConfig config = with({{"backend", "memory"}, {"page-size", "512"}, {"pages-per-block", "32"},
                             {"ram", "16K"}, {"flush-every", "50"}, {"power-cut", "random:4000"}});
    REQUIRE(config.set("mapping", mappings[i]).is_ok());
    REQUIRE(config.set("gc", gcs[i]).is_ok());
    REQUIRE(config.set("seed", seed).is_ok());
    InputDescription input;
    input.synthetic = true;
    input.source = kWorkload;
    INFO("seed " << seed << "; replay: " << runs.replay_command(i)
                 << "; the same run by hand: " << reproduce_command(input, config));
    const RunResult first = run(trace, config);
    REQUIRE(first.power_cuts);
    INFO(violations(*first.power_cuts));
    CHECK(first.power_cuts->violation_count == 0);
    CHECK(first.power_cuts->cuts > 0);
    // The same seed, the same cuts, the same everything.
    const RunResult again = run(trace, config);
    CHECK(again.power_cuts->cuts == first.power_cuts->cuts);
    CHECK(again.power_cuts->recovery_cuts == first.power_cuts->recovery_cuts);
    CHECK(again.stats.chip_page_programs == first.stats.chip_page_programs);
    CHECK(again.simulated_ns == first.simulated_ns);
  }
}

TEST_CASE("torture mode: the verdict line, and each violation with its seed and command", "[sim][powercut]") {
  SimulationReport report;
  report.input.synthetic = true;
  report.input.source = "uniform,read=0.5,ws=8M,count=100,seed=3";
  ConfigurationReport c;
  c.variant.settings = {{"mapping", "dftl"}};
  c.variant.config = with({{"backend", "memory"}, {"mapping", "dftl"}, {"power-cut", "random:900"}, {"seed", "77"}});
  RunResult r;
  PowerCutVerdict v;
  v.cuts = 12;
  v.recovery_cuts = 3;
  v.checked_lpns = 900;
  v.checked_read_pages = 40;
  v.violation_count = 2;
  v.violations = {{4, "LPN 7 reads version 2, which the contract does not allow (durable version 5; nothing "
                      "acknowledged since)"},
                  {9, "LPN 3 holds the data of LPN 4 (version 8)"}};
  r.power_cuts = v;
  c.result = r;
  report.configurations.push_back(c);
  const std::string text = format_table(report);
  INFO(text);
  const std::string command =
      "flashdir-sim --synthetic uniform,read=0.5,ws=8M,count=100,seed=3 --backend memory --mapping dftl --seed 77 "
      "--power-cut random:900";
  CHECK_THAT(text, Catch::Contains("verdict    [mapping=dftl] 12 power cuts survived (3 during recovery); 2 "
                                   "violations; 900 LPNs checked after cuts, 40 read pages between them\n"));
  CHECK_THAT(text, Catch::Contains("violation after cut 4 (seed 77): LPN 7 reads version 2") &&
                       Catch::Contains("; reproduce: " + command + "\n"));
  CHECK_THAT(text, Catch::Contains("violation after cut 9 (seed 77): LPN 3 holds the data of LPN 4 (version 8); "
                                   "reproduce: " + command + "\n"));

  const auto doc = nlohmann::json::parse(format_json(report));
  const auto& cuts = doc["configurations"][0]["power_cuts"];
  CHECK(cuts["cuts"] == 12);
  CHECK(cuts["violation_count"] == 2);
  CHECK(cuts["violations"][1]["after_cut"] == 9);
  CHECK(cuts["seed"] == 77);
  CHECK(cuts["reproduce"] == command);
}

TEST_CASE("flashdir-sim --power-cut: the printed command reproduces a compared configuration's run",
          "[sim][powercut][cli]") {
  using flashdir::testing::run_command;
  using flashdir::testing::tool_path;
  const std::string sim = tool_path("FLASHDIR_SIM");
  const auto compared = run_command(
      sim + " --synthetic 'uniform,read=0.4,ws=2M,count=1500' --page-size 512 --pages-per-block 32 --ram 16K "
            "--backend memory --power-cut every:2500 --seed 3 --compare mapping=cftl,dftl --json 2>/dev/null");
  INFO(compared.output);
  REQUIRE(compared.exit_code == 0);
  const auto doc = nlohmann::json::parse(compared.output);
  const auto& dftl = doc["configurations"][1];
  REQUIRE(dftl["label"] == "mapping=dftl");
  std::string command = dftl["power_cuts"]["reproduce"];
  CHECK_THAT(command, Catch::Contains("--mapping dftl") && Catch::Contains("--power-cut every:2500") &&
                          Catch::Contains("--seed 3"));
  command.replace(0, std::string("flashdir-sim").size(), sim);
  const auto alone = run_command(command + " --json 2>/dev/null");
  INFO(command << "\n" << alone.output);
  REQUIRE(alone.exit_code == 0);
  const auto again = nlohmann::json::parse(alone.output)["configurations"][0];
  CHECK(again["power_cuts"] == dftl["power_cuts"]);
  CHECK(again["stats"] == dftl["stats"]);
  CHECK(dftl["power_cuts"]["cuts"] > 0);

  // The text report: one verdict line per configuration.
  const auto text = run_command(sim + " --synthetic 'uniform,read=0.4,ws=2M,count=500' --page-size 512 "
                                      "--pages-per-block 32 --ram 16K --backend memory --power-cut random:1500 "
                                      "--compare gc=greedy,dual-greedy 2>/dev/null");
  INFO(text.output);
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.output, Catch::Contains("verdict    [gc=greedy] ") && Catch::Contains("verdict    [gc=dual-greedy] ") &&
                              Catch::Contains(" 0 violations;"));
}
