// The figures of a mount's stats.json as `flashdir stats` reads them, and how it says them to a
// person: sizes in KiB/MiB/GiB, fractions in %, durations in µs/ms/s/min. Shared by the summary
// (stats_summary.h) and the rates per interval (stats_rates.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace flashdir::stats {

using Json = nlohmann::json;

// A row of stats.json; 0, 0.0 or "" when its section or the row is missing (a mount without a
// cache engine, or whose cache has stopped, has no "cache" and "ftl" sections).
std::uint64_t count(const Json& stats, std::string_view section, std::string_view row);
double number(const Json& stats, std::string_view section, std::string_view row);
std::string text(const Json& stats, std::string_view section, std::string_view row);
bool flag(const Json& stats, std::string_view section, std::string_view row);

// The cache's page size: what turns the engine's and the FTL's page counts into bytes.
std::uint64_t page_size_bytes(const Json& stats);
// Bytes the engine counted as `row` pages of the "cache" section.
std::uint64_t cache_bytes(const Json& stats, std::string_view row);

// counter_after - counter_before, or counter_after if the counter went back (it was reset).
std::uint64_t delta(std::uint64_t before, std::uint64_t after);

std::string percent(double fraction);              // 0.1234 -> "12.3%"
std::string percent(std::uint64_t part, std::uint64_t whole);  // "-" when whole is 0
std::string duration(double seconds);              // "850 µs", "23 ms", "4.2 s", "2 min 13 s", "3 h 2 min"
std::string bytes(std::uint64_t n);                // "2.9 MiB"
std::string plural(std::uint64_t n, std::string_view noun);  // "1 request", "2 requests"

}  // namespace flashdir::stats
