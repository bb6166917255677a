// The stats file's two renderings.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fs/stats_report.h"

using namespace flashdir::fs;

TEST_CASE("stats render as an aligned table and as ordered JSON") {
  OpCounters counters;
  counters.count(Op::read);
  counters.count(Op::read);
  counters.count(Op::lookup);
  counters.add_read_bytes(8192);
  auto sections = counters.sections();
  sections.push_back(StatsSection{"cache", {{"hit_ratio", 0.5}, {"mode", std::string("writeback")}}});

  const std::string table = render_table(sections);
  CHECK(table.find("requests\n") != std::string::npos);
  CHECK(table.find("  read         ") != std::string::npos);
  CHECK(table.find("write ") == std::string::npos);  // ops never requested are left out

  const auto json = nlohmann::ordered_json::parse(render_json(sections));
  CHECK(json["requests"]["read"] == 2);
  CHECK(json["requests"]["lookup"] == 1);
  CHECK(json["data"]["read_bytes"] == 8192);
  CHECK(json["cache"]["hit_ratio"] == 0.5);
  CHECK(json["cache"]["mode"] == "writeback");
  CHECK(json.begin().key() == "requests");
}
