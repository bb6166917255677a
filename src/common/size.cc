#include "flashdir/size.h"

#include <cctype>
#include <fmt/format.h>

namespace flashdir {

Result<std::uint64_t> parse_size(std::string_view text) {
  auto refuse = [&](std::string_view why) {
    return Status::invalid_argument(
        fmt::format("size '{}' {} (expected a whole number with an optional K, M, G or T suffix)", text, why));
  };
  std::size_t digits = 0;
  std::uint64_t value = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[digits] - '0');
    if (value > (UINT64_MAX - digit) / 10) return refuse("is too large");
    value = value * 10 + digit;
    ++digits;
  }
  if (digits == 0) return refuse("does not start with a number");
  std::string suffix;
  for (char c : text.substr(digits)) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else {
    const std::string_view units = "KMGT";
    const auto unit = units.find(suffix[0]);
    const std::string_view rest = std::string_view(suffix).substr(1);
    if (unit == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "IB")) {
      return refuse("has an unknown unit");
    }
    shift = 10 * static_cast<int>(unit + 1);
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) return refuse("is too large");
  return value << shift;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.{}f} {}", value, value == static_cast<double>(static_cast<std::uint64_t>(value)) ? 0 : 1,
                     kUnits[unit]);
}

}  // namespace flashdir
