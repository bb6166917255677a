// A reset of the counters: the cumulative ones start again from zero, the ratios made of them
// follow, the gauges stay.
#include <catch2/catch.hpp>

#include "fs/stats_baseline.h"

using namespace flashdir::fs;

namespace {

std::vector<StatsSection> stats(std::uint64_t hits, std::uint64_t misses, std::uint64_t cached_pages) {
  const double ratio = static_cast<double>(hits) / static_cast<double>(hits + misses);
  return {StatsSection{"mount", {{"mode", std::string("writethrough")}}},
          StatsSection{"data", {{"read_bytes", hits * 4096}}},
          StatsSection{"cache",
                       {{"cached_pages", cached_pages}, {"read_hit_pages", hits}, {"read_miss_pages", misses},
                        {"hit_ratio", ratio}}}};
}

template <typename T>
T row(const std::vector<StatsSection>& sections, const std::string& section, const std::string& name) {
  for (const auto& s : sections)
    if (s.name == section)
      for (const auto& [n, value] : s.rows)
        if (n == name) return std::get<T>(value);
  FAIL("no row " << section << "." << name);
  return T{};
}

}  // namespace

TEST_CASE("before any reset the counters run since the mount") {
  StatsBaseline baseline;
  auto sections = stats(30, 10, 100);
  baseline.apply(sections);
  CHECK(row<std::uint64_t>(sections, "cache", "read_hit_pages") == 30);
  CHECK(row<double>(sections, "cache", "hit_ratio") == 0.75);
  CHECK(row<std::string>(sections, "mount", "counters_reset_at").empty());
  CHECK(row<double>(sections, "mount", "counters_seconds") >= 0.0);
}

TEST_CASE("a reset zeroes the counters, recomputes the ratios and keeps the gauges") {
  StatsBaseline baseline;
  baseline.reset(stats(30, 10, 100));
  auto sections = stats(40, 10, 120);  // 10 hits and no miss since
  baseline.apply(sections);
  CHECK(row<std::uint64_t>(sections, "cache", "read_hit_pages") == 10);
  CHECK(row<std::uint64_t>(sections, "cache", "read_miss_pages") == 0);
  CHECK(row<std::uint64_t>(sections, "data", "read_bytes") == 10 * 4096);
  CHECK(row<double>(sections, "cache", "hit_ratio") == 1.0);
  CHECK(row<std::uint64_t>(sections, "cache", "cached_pages") == 120);
  CHECK(!row<std::string>(sections, "mount", "counters_reset_at").empty());
}

TEST_CASE("a counter that started again below its baseline shows what it counted since") {
  StatsBaseline baseline;
  baseline.reset(stats(30, 10, 100));
  auto sections = stats(5, 5, 100);  // the cache was stopped and reopened: its counters began at 0
  baseline.apply(sections);
  CHECK(row<std::uint64_t>(sections, "cache", "read_hit_pages") == 5);
  CHECK(row<double>(sections, "cache", "hit_ratio") == 0.5);
}
