// The stats file's two renderings.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fs/ftl_stats_section.h"
#include "fs/stats_report.h"

using namespace flashdir;
using namespace flashdir::fs;

TEST_CASE("stats render as an aligned table and as ordered JSON") {
  OpCounters counters;
  counters.count(Op::read);
  counters.count(Op::read);
  counters.count(Op::lookup);
  counters.count_file_read(8192, false);
  counters.count_file_read(100, true);
  auto sections = counters.sections();
  sections.push_back(StatsSection{"cache", {{"hit_ratio", 0.5}, {"mode", std::string("writeback")}, {"clean", true}}});

  const std::string table = render_table(sections);
  CHECK(table.find("requests\n") != std::string::npos);
  CHECK(table.find("  read         ") != std::string::npos);
  CHECK(table.find("write ") == std::string::npos);  // ops never requested are left out
  CHECK(table.find("  clean  ") != std::string::npos);
  CHECK(table.find("true\n") != std::string::npos);

  const auto json = nlohmann::ordered_json::parse(render_json(sections));
  CHECK(json["requests"]["read"] == 2);
  CHECK(json["requests"]["lookup"] == 1);
  CHECK(json["data"]["read_requests"] == 2);
  CHECK(json["data"]["read_bytes"] == 8292);
  CHECK(json["data"]["pass_through_read_bytes"] == 100);
  CHECK(json["cache"]["hit_ratio"] == 0.5);
  CHECK(json["cache"]["mode"] == "writeback");
  CHECK(json["cache"]["clean"] == true);
  CHECK(json.begin().key() == "requests");
}

TEST_CASE("the ftl section shows the FTL's counters, wear and RAM split") {
  FtlStats ftl;
  ftl.write_pages = 100;
  ftl.chip_page_programs = 150;
  ftl.chip_block_erases = 3;
  ftl.gc_runs = 2;
  ftl.erase_count_min = 1;
  ftl.erase_count_max = 4;
  ftl.erase_count_mean = 2.5;
  ftl.ram_budget_bytes = 1 << 20;
  ftl.ram_mapping_bytes = 3 << 18;
  ftl.ram_buffer_bytes = 1 << 18;
  ftl.mapping_lookups = 10;
  ftl.mapping_hits = 9;
  ftl.translation_page_reads = 7;
  ftl.gc_translation_page_reads = 5;
  ftl.translation_page_writes = 6;
  ftl.gc_translation_page_writes = 4;
  ftl.cbmt_lookups = 8;
  ftl.cbmt_hits = 2;
  ftl.conversions_to_block = 3;
  ftl.aps_repartitions = 11;
  FtlOptions options;
  options.mapping = format::MappingScheme::cftl;
  options.gc = format::GcPolicy::greedy;
  options.ram.policy = format::RamPolicy::static_split;
  options.ram.static_mapping_percent = 30;
  const StatsSection device = ftl_stats_section(ftl, options);
  CHECK(device.name == "ftl");
  auto value = [&](const std::string& name) {
    for (const auto& [row, v] : device.rows)
      if (row == name) return v;
    FAIL("no row " << name);
    return StatsValue{};
  };
  CHECK(std::get<double>(value("write_amplification")) == Approx(1.5));
  CHECK(std::get<std::uint64_t>(value("chip_block_erases")) == 3);
  CHECK(std::get<std::uint64_t>(value("gc_runs")) == 2);
  CHECK(std::get<std::uint64_t>(value("erase_count_min")) == 1);
  CHECK(std::get<double>(value("erase_count_mean")) == Approx(2.5));
  CHECK(std::get<std::uint64_t>(value("erase_count_max")) == 4);
  CHECK(std::get<std::uint64_t>(value("ram_mapping_bytes")) + std::get<std::uint64_t>(value("ram_buffer_bytes")) ==
        std::get<std::uint64_t>(value("ram_budget_bytes")));
  // Beside the hit ratio (host lookups), translation-page I/O by cause: host or GC.
  CHECK(std::get<double>(value("mapping_hit_ratio")) == Approx(0.9));
  CHECK(std::get<std::uint64_t>(value("translation_page_reads_host")) == 2);
  CHECK(std::get<std::uint64_t>(value("translation_page_reads_gc")) == 5);
  CHECK(std::get<std::uint64_t>(value("translation_page_writes_host")) == 2);
  CHECK(std::get<std::uint64_t>(value("translation_page_writes_gc")) == 4);
  // What runs, and the counters of CFTL and APS.
  CHECK(std::get<std::string>(value("mapping_scheme")) == "cftl");
  CHECK(std::get<std::string>(value("gc_policy")) == "greedy");
  CHECK(std::get<std::string>(value("ram_policy")) == "static:30");
  CHECK(std::get<std::string>(value("consolidation")) == "gc");
  CHECK(std::get<std::uint64_t>(value("cbmt_hits")) == 2);
  CHECK(std::get<double>(value("cbmt_hit_ratio")) == Approx(0.25));
  CHECK(std::get<std::uint64_t>(value("conversions_to_block")) == 3);
  CHECK(std::get<std::uint64_t>(value("aps_repartitions")) == 11);
}
