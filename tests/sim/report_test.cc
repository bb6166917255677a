// The reports: header, table and JSON carry the options, the trace and one entry per
// configuration.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "flashdir/sim/report.h"
#include "flashdir/size.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

// Plans and runs `axes` over a small synthetic workload.
SimulationReport small_report(const std::vector<const char*>& axes_text) {
  auto spec = parse_synthetic("zipf:0.8,read=0.6,ws=4M,count=1500,seed=9");
  REQUIRE(spec.is_ok());
  auto trace = generate(*spec);
  REQUIRE(trace.is_ok());
  SimConfig base;
  REQUIRE(base.set("seed", "77").is_ok());
  // A small device RAM, so that the replay itself programs and collects on every scheme.
  REQUIRE(base.set("ram", "64K").is_ok());
  std::vector<CompareAxis> axes;
  for (const char* text : axes_text) axes.push_back(parse_compare_axis(text).value());
  auto variants = expand_compare(base, axes);
  REQUIRE(variants.is_ok());
  auto plan = plan_simulation(*trace, *variants);
  REQUIRE(plan.is_ok());
  InputDescription input;
  input.synthetic = true;
  input.source = to_string(*spec);
  SimulationReport report = start_report(input, base, axes, summarize_trace(*trace, 0.001), *plan);
  for (std::size_t i = 0; i < plan->runs.size(); ++i) {
    const PlannedRun& run = plan->runs[i];
    auto result = run_configuration(run.variant.config, run.geometry, plan->traces[run.trace_index]);
    INFO(result.status().to_string());
    REQUIRE(result.is_ok());
    report.configurations[i].result = *result;
  }
  return report;
}

}  // namespace

TEST_CASE("report: JSON holds the options, the trace and one object per configuration", "[sim][report]") {
  const SimulationReport report = small_report({"mapping=cftl,dftl,page", "gc=greedy,dual-greedy"});
  const auto doc = nlohmann::json::parse(format_json(report));
  CHECK(doc["seed"] == 77);
  CHECK(doc["options"]["mapping"] == "cftl");
  CHECK(doc["options"]["seed"] == "77");
  CHECK(doc["options"].size() == SimConfig::keys().size());
  CHECK(doc["input"]["kind"] == "synthetic");
  CHECK(doc["trace"]["requests"] == 1500);
  REQUIRE(doc["compare"].size() == 2);
  CHECK(doc["compare"][0]["key"] == "mapping");
  CHECK(doc["compare"][1]["values"] == nlohmann::json({"greedy", "dual-greedy"}));
  REQUIRE(doc["footprints"].size() == 1);
  CHECK(report.memory_estimate_bytes > 0);
  CHECK(doc["memory_estimate_bytes"] == report.memory_estimate_bytes);
  const auto& configurations = doc["configurations"];
  REQUIRE(configurations.size() == 6);
  for (std::size_t i = 0; i < configurations.size(); ++i) {
    const auto& c = configurations[i];
    INFO(c.dump());
    CHECK(c["label"] == report.configurations[i].variant.label());
    CHECK(c["settings"]["mapping"] == report.configurations[i].variant.config.get("mapping").value());
    CHECK(c["requests"] == 1500);
    CHECK(c["stats"]["write_pages"] == report.configurations[i].result->stats.write_pages);
    CHECK(c["stats"]["gc_runs"].get<std::uint64_t>() > 0);
    CHECK(c["write_amplification"].get<double>() >= 1.0);
    CHECK(c["chip"]["block_count"] == report.configurations[i].geometry.block_count);
    CHECK(c["mean_service_us"].get<double>() > 0);
    CHECK(c["speed"]["replay_requests_per_second"].get<double>() > 0);
    CHECK(c["erases_per_block"]["max"].get<std::uint32_t>() >= 1);
  }
  // The page map looks nothing up in a cache; the ratio is undefined rather than 0.
  CHECK(configurations[4]["cbmt_hit_ratio"].is_null());
  CHECK(configurations[0]["mapping_hit_ratio"].is_number());
  // Next to the hit ratio: the translation-page I/O of host lookups apart from GC's.
  for (const auto& c : configurations) {
    const auto& stats = c["stats"];
    CHECK(c["translation_page_reads_gc"] == stats["gc_translation_page_reads"]);
    CHECK(c["translation_page_reads_host"].get<std::uint64_t>() + c["translation_page_reads_gc"].get<std::uint64_t>() ==
          stats["translation_page_reads"].get<std::uint64_t>());
    CHECK(c["translation_page_writes_gc"] == stats["gc_translation_page_writes"]);
    CHECK(c["translation_page_writes_host"].get<std::uint64_t>() +
              c["translation_page_writes_gc"].get<std::uint64_t>() ==
          stats["translation_page_writes"].get<std::uint64_t>());
  }
}

TEST_CASE("report: the header and the table", "[sim][report]") {
  const SimulationReport report = small_report({"mapping=cftl,page"});
  const std::string header = format_header(report);
  CHECK_THAT(header, Catch::StartsWith("seed       77\n"));
  for (const char* part :
       {"input      synthetic zipf:0.8", "options", "mapping=cftl", "compare    mapping=cftl,page",
        "(2 configurations)", "trace      synthetic: 1500 requests", "footprint", "chip"}) {
    CHECK_THAT(header, Catch::Contains(part));
  }
  CHECK_THAT(header, Catch::Contains("memory     " + format_size(report.memory_estimate_bytes) + " estimated"));
  const std::string table = format_table(report);
  INFO(table);
  CHECK_THAT(table, Catch::Contains("mapping=cftl") && Catch::Contains("mapping=page"));
  for (const char* row : {"requests",
                          "read pages",
                          "write pages",
                          "chip reads",
                          "chip programs",
                          "chip erases",
                          "GC runs",
                          "GC copies (data + translation)",
                          "write amplification",
                          "translation page reads host / GC",
                          "translation page writes host / GC",
                          "mapping hit ratio",
                          "CBMT hit ratio",
                          "conversions to block / to page",
                          "erases per block min/mean/max",
                          "mean service (us)",
                          "mean response (us)",
                          "service time: chip / RAM",
                          "buffer hit ratio reads / writes",
                          "RAM mapping used mean / partition end",
                          "evicted data / entries / TPs",
                          "APS repartitions",
                          "sim speed, replay (req/s)",
                          "sim speed, whole run (req/s)"}) {
    CHECK_THAT(table, Catch::Contains(row));
  }
  // One line per row plus the column labels, every line as wide as the first.
  const auto first_end = table.find('\n');
  std::size_t lines = 0;
  for (std::size_t at = 0; at < table.size(); at = table.find('\n', at) + 1) {
    CHECK(table.find('\n', at) - at == first_end);
    ++lines;
  }
  CHECK(lines == 36);
}

TEST_CASE("report: many configurations wrap into tables that stay readable", "[sim][report]") {
  const SimulationReport report = small_report({"mapping=cftl,dftl,page", "gc=greedy,dual-greedy,cost-benefit"});
  REQUIRE(report.configurations.size() == 9);
  const std::string table = format_table(report);
  INFO(table);
  std::size_t blocks = 1;
  std::size_t longest = 0;
  for (std::size_t at = 0; at < table.size(); at = table.find('\n', at) + 1) {
    const std::size_t length = table.find('\n', at) - at;
    longest = std::max(longest, length);
    if (length == 0) ++blocks;
  }
  CHECK(longest <= 120);
  CHECK(blocks >= 3);  // nine columns of ~20 characters do not fit in one
  // Every configuration once, as a column label, and every row name in every block.
  for (const ConfigurationReport& c : report.configurations) {
    const std::string label = c.variant.label();
    CHECK(table.find(label) != std::string::npos);
    CHECK(table.find(label, table.find(label) + 1) == std::string::npos);
  }
  std::size_t write_amplification_rows = 0;
  for (auto at = table.find("write amplification"); at != std::string::npos;
       at = table.find("write amplification", at + 1)) {
    ++write_amplification_rows;
  }
  CHECK(write_amplification_rows == blocks);
}
