#include "value_text.h"

#include <fmt/format.h>
#include <charconv>
#include <cmath>

namespace flashdir::sim::value_text {

Result<std::uint64_t> parse_unsigned(std::string_view text) {
  int base = 10;
  std::string_view digits = text;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    digits = text.substr(2);
  }
  std::uint64_t value = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value, base);
  if (digits.empty() || ptr != end || ec == std::errc::invalid_argument) {
    return Status::invalid_argument(fmt::format("'{}' is not a whole number", text));
  }
  if (ec == std::errc::result_out_of_range)
    return Status::invalid_argument(fmt::format("'{}' is too large", text));
  return value;
}

Result<double> parse_real(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ptr != end || ec != std::errc() || !std::isfinite(value)) {
    return Status::invalid_argument(fmt::format("'{}' is not a number", text));
  }
  return value;
}

Result<bool> parse_switch(std::string_view text) {
  for (std::string_view yes : {"on", "true", "yes", "1"}) {
    if (text == yes) return true;
  }
  for (std::string_view no : {"off", "false", "no", "0"}) {
    if (text == no) return false;
  }
  return Status::invalid_argument(fmt::format("'{}' is not a switch (expected on or off)", text));
}

std::string size_text(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, kUnits[unit]);
}

std::string real_text(double value) {
  return fmt::format("{}", value);
}

}  // namespace flashdir::sim::value_text
