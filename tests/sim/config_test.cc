// SimConfig: every key parses, prints back, and refuses bad values naming the key.
#include <catch2/catch.hpp>

#include <functional>
#include <set>
#include <string>

#include "flashdir/sim/config.h"

using namespace flashdir;
using namespace flashdir::sim;

TEST_CASE("sim config: every key prints its default in a form set() reads back", "[sim][config]") {
  const SimConfig defaults;
  std::set<std::string> names;
  for (const ConfigKey& key : SimConfig::keys()) {
    INFO(key.name);
    CHECK(names.insert(std::string(key.name)).second);
    CHECK_FALSE(key.help.empty());
    CHECK(SimConfig::has_key(key.name));
    auto text = defaults.get(key.name);
    REQUIRE(text.is_ok());
    SimConfig copy;
    REQUIRE(copy.set(key.name, *text).is_ok());
    CHECK(copy.get(key.name).value() == *text);
  }
  CHECK(names.size() == 27);
  CHECK(defaults.get("page-size").value() == "4K");
  CHECK(defaults.get("ram").value() == "1M");
  CHECK(defaults.get("ram-policy").value() == "stack");
  CHECK(defaults.get("op").value() == "7");
  CHECK(defaults.get("gc").value() == "dual-greedy");
  CHECK(defaults.get("consolidation").value() == "gc");
  CHECK(defaults.get("size").value() == "auto");
  CHECK(defaults.get("prefill").value() == "on");
  CHECK(defaults.get("utilization").value() == "0.9");
  CHECK(defaults.get("nonsense").status().code() == StatusCode::not_found);
  CHECK_FALSE(SimConfig::has_key("nonsense"));
}

TEST_CASE("sim config: each key sets its field", "[sim][config]") {
  struct Case {
    const char* key;
    const char* value;
    std::function<bool(const SimConfig&)> holds;
    const char* printed;  // how get() spells it afterwards
  };
  const Case cases[] = {
      {"page-size", "2K", [](const SimConfig& c) { return c.page_size_bytes == 2048; }, "2K"},
      {"pages-per-block", "64", [](const SimConfig& c) { return c.pages_per_block == 64; }, "64"},
      {"oob-size", "128", [](const SimConfig& c) { return c.oob_size_bytes == 128; }, "128"},
      {"latency", "mlc", [](const SimConfig& c) { return c.latency == LatencyPreset::mlc; }, "mlc"},
      {"latency", "zero", [](const SimConfig& c) { return c.latency == LatencyPreset::zero; }, "zero"},
      {"backend", "memory", [](const SimConfig& c) { return c.backend == Backend::memory; }, "memory"},
      {"size", "256M", [](const SimConfig& c) { return c.chip_size_bytes == 256ULL << 20; }, "256M"},
      {"size", "auto", [](const SimConfig& c) { return c.chip_size_bytes == 0; }, "auto"},
      {"utilization", "0.5", [](const SimConfig& c) { return c.utilization == 0.5; }, "0.5"},
      {"utilization", "1", [](const SimConfig& c) { return c.utilization == 1.0; }, "1"},
      {"op", "12.5", [](const SimConfig& c) { return c.overprovision_permille == 125; }, "12.5"},
      {"op", "0", [](const SimConfig& c) { return c.overprovision_permille == 0; }, "0"},
      {"mapping", "dftl", [](const SimConfig& c) { return c.mapping == format::MappingScheme::dftl; },
       "dftl"},
      {"mapping", "page", [](const SimConfig& c) { return c.mapping == format::MappingScheme::page; },
       "page"},
      {"gc", "greedy", [](const SimConfig& c) { return c.gc == format::GcPolicy::greedy; }, "greedy"},
      {"gc", "cost-benefit", [](const SimConfig& c) { return c.gc == format::GcPolicy::cost_benefit; },
       "cost-benefit"},
      {"consolidation", "eager",
       [](const SimConfig& c) { return c.consolidation == ConsolidationMode::eager; }, "eager"},
      {"consolidation", "off", [](const SimConfig& c) { return c.consolidation == ConsolidationMode::off; },
       "off"},
      {"ram", "16M", [](const SimConfig& c) { return c.ram.budget_bytes == 16 << 20; }, "16M"},
      {"ram", "1000", [](const SimConfig& c) { return c.ram.budget_bytes == 1000; }, "1000"},
      {"ram-policy", "aps", [](const SimConfig& c) { return c.ram.policy == format::RamPolicy::aps; }, "aps"},
      {"ram-policy", "static:30",
       [](const SimConfig& c) {
         return c.ram.policy == format::RamPolicy::static_split && c.ram.static_mapping_percent == 30;
       },
       "static:30"},
      {"aps-interval", "500", [](const SimConfig& c) { return c.ram.aps_interval_requests == 500; }, "500"},
      {"checkpoint-interval", "4096", [](const SimConfig& c) { return c.checkpoint_interval_pages == 4096; },
       "4096"},
      {"flush-every", "100", [](const SimConfig& c) { return c.flush_every_requests == 100; }, "100"},
      {"prefill", "off", [](const SimConfig& c) { return !c.prefill; }, "off"},
      {"prefill", "false", [](const SimConfig& c) { return !c.prefill; }, "off"},
      {"age", "2.5", [](const SimConfig& c) { return c.age_factor == 2.5; }, "2.5"},
      {"age", "0", [](const SimConfig& c) { return c.age_factor == 0.0; }, "0"},
      {"repeat", "3", [](const SimConfig& c) { return c.repeat == 3; }, "3"},
      {"closed-loop", "on", [](const SimConfig& c) { return c.closed_loop; }, "on"},
      {"closed-loop", "yes", [](const SimConfig& c) { return c.closed_loop; }, "on"},
      {"time-scale", "0.25", [](const SimConfig& c) { return c.time_scale == 0.25; }, "0.25"},
      {"compaction", "first-touch",
       [](const SimConfig& c) { return c.chunk_order == ChunkOrder::first_touch; }, "first-touch"},
      {"seed", "42", [](const SimConfig& c) { return c.seed == 42; }, "42"},
      {"seed", "0x10", [](const SimConfig& c) { return c.seed == 16; }, "16"},
      {"chunk-pages", "16", [](const SimConfig& c) { return c.chunk_pages_asked == 16; }, "16"},
      {"chunk-pages", "block", [](const SimConfig& c) { return c.chunk_pages_asked == 0; }, "block"},
      {"power-cut", "every:500",
       [](const SimConfig& c) {
         return c.power_cut == PowerCutPlan{PowerCutPlan::Mode::every, 500};
       },
       "every:500"},
      {"power-cut", "random:70",
       [](const SimConfig& c) {
         return c.power_cut == PowerCutPlan{PowerCutPlan::Mode::random, 70};
       },
       "random:70"},
      {"power-cut", "off", [](const SimConfig& c) { return !c.power_cut.enabled(); }, "off"},
  };
  for (const Case& c : cases) {
    INFO(c.key << "=" << c.value);
    SimConfig config;
    const Status s = config.set(c.key, c.value);
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    CHECK(c.holds(config));
    CHECK(config.get(c.key).value() == c.printed);
  }
}

TEST_CASE("sim config: bad values are refused with the key named, and change nothing", "[sim][config]") {
  struct Case {
    const char* key;
    const char* value;
    const char* reason;
  };
  const Case cases[] = {
      {"page-size", "3000", "not a power of two"},
      {"page-size", "128K", "outside"},
      {"page-size", "4X", "unknown unit"},
      {"pages-per-block", "1", "outside"},
      {"pages-per-block", "many", "not a whole number"},
      {"oob-size", "16", "OOB size 16"},
      {"latency", "tlc", "tlc"},
      {"backend", "image", "expected metadata or memory"},
      {"size", "0", "0 bytes"},
      {"size", "big", "does not start with a number"},
      {"utilization", "0", "above 0"},
      {"utilization", "1.5", "at most 1"},
      {"utilization", "nan", "not a number"},
      {"op", "100", "below 100"},
      {"op", "-1", "at least 0"},
      {"mapping", "ftl", "ftl"},
      {"gc", "random", "random"},
      {"consolidation", "on", "expected off, gc or eager"},
      {"ram-policy", "lru", "unknown RAM policy"},
      {"ram-policy", "static:101", "P in 0..100"},
      {"aps-interval", "0", "at least one request"},
      {"checkpoint-interval", "-5", "not a whole number"},
      {"flush-every", "1.5", "not a whole number"},
      {"prefill", "maybe", "expected on or off"},
      {"age", "-1", "between 0 and 1000"},
      {"repeat", "0", "between 1 and"},
      {"closed-loop", "2", "expected on or off"},
      {"time-scale", "0", "above 0"},
      {"time-scale", "inf", "not a number"},
      {"compaction", "random", "expected address or first-touch"},
      {"seed", "0xZZ", "not a whole number"},
      {"seed", "99999999999999999999", "too large"},
      {"chunk-pages", "0", "at least one page"},
      {"chunk-pages", "half", "not a whole number"},
      {"power-cut", "sometimes", "expected off, every:N or random:N"},
      {"power-cut", "every", "every needs a number of chip operations: every:N"},
      {"power-cut", "random:0", "at least one chip operation"},
      {"power-cut", "every:x", "not a whole number"},
  };
  for (const Case& c : cases) {
    INFO(c.key << "=" << c.value);
    SimConfig config;
    const Status s = config.set(c.key, c.value);
    INFO(s.to_string());
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.code() == StatusCode::invalid_argument);
    CHECK_THAT(s.message(), Catch::StartsWith(std::string(c.key) + "=" + c.value + ": "));
    CHECK_THAT(s.message(), Catch::Contains(c.reason));
    for (const ConfigKey& key : SimConfig::keys())
      CHECK(config.get(key.name).value() == SimConfig().get(key.name).value());
  }
  SimConfig config;
  const Status unknown = config.set("mapping-cache", "64M");
  CHECK_THAT(unknown.message(), Catch::Contains("unknown key 'mapping-cache'") && Catch::Contains("ram-policy"));
}

TEST_CASE("sim config: FTL options and geometry come from the fields", "[sim][config]") {
  SimConfig config;
  REQUIRE(config.set("mapping", "dftl").is_ok());
  REQUIRE(config.set("gc", "cost-benefit").is_ok());
  REQUIRE(config.set("op", "20").is_ok());
  REQUIRE(config.set("ram", "128K").is_ok());
  REQUIRE(config.set("ram-policy", "static:100").is_ok());
  REQUIRE(config.set("checkpoint-interval", "512").is_ok());
  REQUIRE(config.set("consolidation", "eager").is_ok());
  REQUIRE(config.set("page-size", "2K").is_ok());
  REQUIRE(config.set("pages-per-block", "64").is_ok());
  REQUIRE(config.set("latency", "mlc").is_ok());
  const FtlOptions options = config.ftl_options();
  CHECK(options.mapping == format::MappingScheme::dftl);
  CHECK(options.gc == format::GcPolicy::cost_benefit);
  CHECK(options.overprovision_permille == 200);
  CHECK(options.ram.budget_bytes == 128 << 10);
  CHECK(options.ram.policy == format::RamPolicy::static_split);
  CHECK(options.ram.static_mapping_percent == 100);
  CHECK(options.checkpoint_interval_pages == 512);
  CHECK(options.cftl.consolidation == ConsolidationMode::eager);
  const Geometry g = config.geometry(100);
  CHECK(g.page_size_bytes == 2048);
  CHECK(g.pages_per_block == 64);
  CHECK(g.oob_size_bytes == 64);
  CHECK(g.block_count == 100);
  CHECK(config.latency_profile() == LatencyProfile::of(LatencyPreset::mlc));
  CHECK(config.validate().is_ok());
}

TEST_CASE("sim config: checks across fields: device RAM, chunk, power cuts", "[sim][config]") {
  auto validated = [](std::initializer_list<std::pair<const char*, const char*>> settings) {
    SimConfig config;
    for (const auto& [key, value] : settings) REQUIRE(config.set(key, value).is_ok());
    return config.validate();
  };
  // --ram 0 (or below a page) is refused where a mapping cache needs the RAM ...
  for (const char* mapping : {"cftl", "dftl"}) {
    INFO(mapping);
    const Status s = validated({{"mapping", mapping}, {"ram", "0"}});
    REQUIRE_FALSE(s.is_ok());
    CHECK_THAT(s.message(), Catch::StartsWith("ram=0: ") && Catch::Contains("at least one page (4K)") &&
                                Catch::Contains("only mapping=page"));
    CHECK_FALSE(validated({{"mapping", mapping}, {"ram", "2K"}}).is_ok());
    CHECK(validated({{"mapping", mapping}, {"ram", "4K"}}).is_ok());
    CHECK(validated({{"mapping", mapping}, {"ram", "2K"}, {"page-size", "2K"}}).is_ok());
  }
  // ... and means a device without a write buffer for the page scheme, whose map is free.
  CHECK(validated({{"mapping", "page"}, {"ram", "0"}}).is_ok());

  CHECK_THAT(validated({{"pages-per-block", "64"}, {"chunk-pages", "128"}}).message(),
             Catch::Contains("chunk-pages=128: a chunk is at most a block (64 pages)"));
  CHECK(validated({{"pages-per-block", "64"}, {"chunk-pages", "64"}}).is_ok());

  // The oracle of the torture mode reads page contents: only the memory backend keeps them.
  CHECK_THAT(validated({{"power-cut", "every:100"}}).message(),
             Catch::Contains("power-cut=every:100 needs backend=memory"));
  CHECK(validated({{"power-cut", "every:100"}, {"backend", "memory"}}).is_ok());
}
