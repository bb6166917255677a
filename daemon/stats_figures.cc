#include "stats_figures.h"

#include <fmt/format.h>

#include <cmath>

#include "flashdir/size.h"

namespace flashdir::stats {
namespace {

const Json* row_of(const Json& stats, std::string_view section, std::string_view row) {
  const auto s = stats.find(section);
  if (s == stats.end() || !s->is_object()) return nullptr;
  const auto r = s->find(row);
  return r == s->end() ? nullptr : &*r;
}

}  // namespace

std::uint64_t count(const Json& stats, std::string_view section, std::string_view row) {
  const Json* value = row_of(stats, section, row);
  return value != nullptr && value->is_number_unsigned() ? value->get<std::uint64_t>() : 0;
}

double number(const Json& stats, std::string_view section, std::string_view row) {
  const Json* value = row_of(stats, section, row);
  return value != nullptr && value->is_number() ? value->get<double>() : 0.0;
}

std::string text(const Json& stats, std::string_view section, std::string_view row) {
  const Json* value = row_of(stats, section, row);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

bool flag(const Json& stats, std::string_view section, std::string_view row) {
  const Json* value = row_of(stats, section, row);
  return value != nullptr && value->is_boolean() && value->get<bool>();
}

std::uint64_t page_size_bytes(const Json& stats) { return count(stats, "cache", "page_size_bytes"); }

std::uint64_t cache_bytes(const Json& stats, std::string_view row) {
  return count(stats, "cache", row) * page_size_bytes(stats);
}

std::uint64_t delta(std::uint64_t before, std::uint64_t after) { return after >= before ? after - before : after; }

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? "-" : percent(static_cast<double>(part) / static_cast<double>(whole));
}

std::string duration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.0f} µs", seconds * 1e6);
  if (seconds < 1.0) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 60.0) return fmt::format("{:.{}f} s", seconds, seconds == std::round(seconds) ? 0 : 1);
  const auto whole = static_cast<std::uint64_t>(std::llround(seconds));
  const auto two_units = [](std::uint64_t big, const char* big_unit, std::uint64_t small, const char* small_unit) {
    return small == 0 ? fmt::format("{} {}", big, big_unit) : fmt::format("{} {} {} {}", big, big_unit, small, small_unit);
  };
  if (whole < 3600) return two_units(whole / 60, "min", whole % 60, "s");
  return two_units(whole / 3600, "h", whole % 3600 / 60, "min");
}

std::string bytes(std::uint64_t n) { return format_size(n); }

std::string plural(std::uint64_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

}  // namespace flashdir::stats
