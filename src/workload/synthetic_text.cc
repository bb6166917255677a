#include "synthetic_text.h"

#include <fmt/format.h>
#include <limits>

#include "text_fields.h"

namespace flashdir::sim::detail {

std::string size_text(std::uint64_t bytes) {
  static constexpr struct {
    int shift;
    char suffix;
  } kUnits[] = {{40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}};
  for (const auto& unit : kUnits) {
    const std::uint64_t scale = std::uint64_t{1} << unit.shift;
    if (bytes != 0 && bytes % scale == 0) return fmt::format("{}{}", bytes / scale, unit.suffix);
  }
  return std::to_string(bytes);
}

namespace {

constexpr struct {
  std::uint64_t scale;
  std::string_view suffix;
} kTimeUnits[] = {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};

}  // namespace

std::string duration_text(std::uint64_t ns) {
  if (ns == 0) return "0";
  for (const auto& unit : kTimeUnits) {
    if (ns % unit.scale == 0) return fmt::format("{}{}", ns / unit.scale, unit.suffix);
  }
  return std::to_string(ns);  // not reached: every number is a multiple of 1 ns
}

std::string pattern_text(const SyntheticSpec& spec) {
  switch (spec.pattern) {
    case SyntheticSpec::Pattern::uniform: return "uniform";
    case SyntheticSpec::Pattern::zipf: return fmt::format("zipf:{}", spec.zipf_theta);
    case SyntheticSpec::Pattern::sequential: return "seq";
  }
  return "unknown";
}

Result<std::uint64_t> parse_duration_ns(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string_view suffix = text.substr(digits);
  std::uint64_t scale = 0;
  if (suffix.empty()) scale = 1;
  for (const auto& unit : kTimeUnits) {
    if (suffix == unit.suffix) scale = unit.scale;
  }
  if (digits == 0 || scale == 0) {
    return Status::invalid_argument(fmt::format(
        "time '{}' is not a whole number with an optional ns, us, ms or s", excerpt(text)));
  }
  auto value = parse_u64(text.substr(0, digits), "time");
  if (!value.is_ok()) return value.status();
  if (*value > std::numeric_limits<std::uint64_t>::max() / scale) {
    return Status::invalid_argument(fmt::format("time '{}' is too large", excerpt(text)));
  }
  return *value * scale;
}

}  // namespace flashdir::sim::detail
