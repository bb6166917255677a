#include "stats_rates.h"

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

namespace flashdir::stats {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Widths of the columns, shared by the header and the lines.
constexpr const char* kLayout = "{:<8} {:>9} {:>10} {:>6} {:>11} {:>13} {:>9} {:>11} {:>10} {:>6}\n";

}  // namespace

std::string rates_header() {
  return fmt::format(kLayout, "time", "reads/s", "read MiB/s", "hit", "cache MiB/s", "backing MiB/s", "writes/s",
                     "write MiB/s", "dirty", "fill");
}

std::string rates_line(const std::string& clock, const Json& before, const Json& after, double seconds) {
  const auto change = [&](std::string_view section, std::string_view row) {
    return delta(count(before, section, row), count(after, section, row));
  };
  const auto per_second = [seconds](double n) { return fmt::format("{:.1f}", n / seconds); };
  const double page = static_cast<double>(page_size_bytes(after));
  const std::uint64_t hits = change("cache", "read_hit_pages");
  const std::uint64_t misses = change("cache", "read_miss_pages");
  // From the backing: the cache's misses, and what passed through it.
  const double backing_bytes =
      static_cast<double>(misses) * page + static_cast<double>(change("data", "pass_through_read_bytes"));
  const std::string fill = after.contains("ftl")
                               ? percent(count(after, "cache", "cached_pages"), count(after, "cache", "capacity_pages"))
                               : "-";
  return fmt::format(kLayout, clock, per_second(static_cast<double>(change("data", "read_requests"))),
                     per_second(static_cast<double>(change("data", "read_bytes")) / kMiB), percent(hits, hits + misses),
                     per_second(static_cast<double>(hits) * page / kMiB), per_second(backing_bytes / kMiB),
                     per_second(static_cast<double>(change("data", "write_requests"))),
                     per_second(static_cast<double>(change("data", "written_bytes")) / kMiB),
                     bytes(cache_bytes(after, "dirty_pages")), fill);
}

}  // namespace flashdir::stats
