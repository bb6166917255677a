// flashdir-sim, run as the real binary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/run_command.h"
#include "support/temp_dir.h"

using namespace flashdir::testing;

namespace {

CommandResult sim(const std::string& args) {
  return run_command(tool_path("FLASHDIR_SIM") + " " + args);
}

// stdout alone: the JSON document must not be mixed with anything.
CommandResult sim_stdout(const std::string& args) {
  return run_command(tool_path("FLASHDIR_SIM") + " " + args + " 2>/dev/null");
}

constexpr const char* kWorkload = "--synthetic uniform,read=0.6,ws=4M,count=2000";

}  // namespace

TEST_CASE("flashdir-sim replays a synthetic workload and prints its report", "[sim][cli]") {
  const auto result = sim(std::string(kWorkload) + " --seed 5 --latency mlc");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.output, Catch::StartsWith("seed       5\n"));
  for (const char* part : {"synthetic uniform", "seed=5", "latency=mlc", "2000 requests", "footprint",
                           "chip ", "write amplification", "GC runs", "mean response (us)", "sim speed"}) {
    CHECK_THAT(result.output, Catch::Contains(part));
  }
}

TEST_CASE("flashdir-sim --json --compare prints one document with one object per configuration",
          "[sim][cli]") {
  const auto result =
      sim_stdout(std::string(kWorkload) + " --json --compare mapping=cftl,page --compare op=7,20");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto doc = nlohmann::json::parse(result.output);
  REQUIRE(doc["configurations"].size() == 4);
  CHECK(doc["configurations"][1]["label"] == "mapping=cftl op=20");
  CHECK(doc["configurations"][2]["settings"]["mapping"] == "page");
  CHECK(doc["seed"] == 1);
  for (const auto& c : doc["configurations"]) CHECK(c["requests"] == 2000);
}

TEST_CASE("flashdir-sim refuses bad input with one line and a non-zero exit", "[sim][cli]") {
  struct Case {
    std::string args;
    std::string reason;
  };
  const Case cases[] = {
      {"/nonexistent/trace", "does not exist"},
      {std::string(kWorkload) + " --mapping ftl", "mapping=ftl"},
      {std::string(kWorkload) + " --compare gc=greedy,lazy", "gc=lazy"},
      {std::string(kWorkload) + " --compare rum=1M", "unknown key 'rum'"},
      {std::string(kWorkload) + " --size 8M", "too small"},
      {std::string(kWorkload) + " --format msr", "apply to a trace file"},
      {"--synthetic uniform,ws=4M", "count="},
      {"", "either a TRACE"},
      // A sparse trace would size a 2.4 TiB chip: refused before anything is built.
      {"--synthetic uniform,ws=1T,size=1T,count=1", "above --max-memory"},
      {std::string(kWorkload) + " --max-memory 1M", "above --max-memory 1 MiB"},
      {std::string(kWorkload) + " --max-memory lots", "--max-memory: size 'lots'"},
      {std::string(kWorkload) + " --ram 0", "ram=0: cftl keeps its mapping cache in the device RAM"},
      {std::string(kWorkload) + " --no-such-option", "--no-such-option"},
  };
  for (const Case& c : cases) {
    const auto result = sim(c.args);
    INFO(c.args << "\n" << result.output);
    CHECK(result.exit_code != 0);
    CHECK_THAT(result.output, Catch::StartsWith("flashdir-sim: ") && Catch::Contains(c.reason));
    CHECK(std::count(result.output.begin(), result.output.end(), '\n') == 1);
  }
}

TEST_CASE("flashdir-sim refuses a binary file given as a trace, naming the line", "[sim][cli]") {
  TempDir dir;
  // A gzip header, then bytes with no newline for longer than any text line: both are refused
  // before a single request is replayed.
  const std::string gzip_head("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\n", 11);
  const std::string no_newline(70'000, '\x01');
  struct Case {
    std::string name;
    std::string bytes;
    std::string reason;
  };
  const Case cases[] = {
      {"t.gz", gzip_head, "t.gz:1: not a text trace: the line holds binary bytes: '\\x1f\\x8b\\x08\\x00"},
      {"blob", no_newline, "blob: line 1 is longer than 65536 bytes (is this a text trace?)"},
  };
  for (const Case& c : cases) {
    const auto path = dir / c.name;
    std::ofstream(path, std::ios::binary) << c.bytes;
    const auto result = sim(path.string());
    INFO(result.output);
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.output, Catch::StartsWith("flashdir-sim: ") && Catch::Contains(c.reason));
    CHECK(std::count(result.output.begin(), result.output.end(), '\n') == 1);
  }
}

TEST_CASE("flashdir-sim --help lists the options and the comparable keys", "[sim][cli]") {
  const auto help = sim("--help");
  CHECK(help.exit_code == 0);
  for (const char* word : {"--synthetic",
                           "--format",
                           "--time-unit-ns",
                           "--device",
                           "--compare",
                           "--json",
                           "--size",
                           "--utilization",
                           "--prefill",
                           "--no-prefill",
                           "--age",
                           "--repeat",
                           "--closed-loop",
                           "--time-scale",
                           "--page-size",
                           "--pages-per-block",
                           "--oob-size",
                           "--latency",
                           "--op",
                           "--mapping",
                           "--gc",
                           "--ram",
                           "--ram-policy",
                           "--checkpoint-interval",
                           "--backend",
                           "--seed"}) {
    CHECK_THAT(help.output, Catch::Contains(word));
  }
}
