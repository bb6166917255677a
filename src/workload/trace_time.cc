#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "text_fields.h"
#include "trace_record.h"

namespace flashdir::sim::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<TraceTime> parse_trace_time(std::string_view text, std::string_view what) {
  if (text.empty()) return Status::invalid_argument(fmt::format("{} is empty", what));
  auto invalid = [&] {
    return Status::invalid_argument(
        fmt::format("invalid {} '{}' (expected a non-negative number)", what, excerpt(text)));
  };
  if (text.front() == '-') {
    return Status::invalid_argument(fmt::format("{} '{}' is negative", what, excerpt(text)));
  }

  const std::size_t point = text.find('.');
  const std::string_view whole_text = text.substr(0, point);
  const std::string_view fraction_text =
      point == std::string_view::npos ? std::string_view() : text.substr(point);
  bool plain = true;  // digits, at most one point, at least one digit
  for (char c : whole_text) plain = plain && is_digit(c);
  for (char c : fraction_text.substr(fraction_text.empty() ? 0 : 1)) plain = plain && is_digit(c);
  plain = plain && (!whole_text.empty() || fraction_text.size() > 1);

  TraceTime time;
  if (plain) {
    // The common case, exact for the whole part however large.
    if (!whole_text.empty()) {
      auto whole = parse_u64(whole_text, what);
      if (!whole.is_ok()) return whole.status();
      time.whole = *whole;
    }
    if (fraction_text.size() > 1) {
      const char* end = fraction_text.data() + fraction_text.size();
      const auto [ptr, ec] = std::from_chars(fraction_text.data(), end, time.fraction);
      if (ec != std::errc() || ptr != end) return invalid();
      if (time.fraction >= 1.0) time.fraction = std::nextafter(1.0, 0.0);  // ".9999...9" rounds up
    }
    return time;
  }

  // Exponent notation ("1.5e-3"): rare in traces, and then the values are small enough for a
  // double to hold them exactly enough.
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return invalid();
  if (value < 0) return Status::invalid_argument(fmt::format("{} '{}' is negative", what, excerpt(text)));
  if (value >= 0x1p64) {
    return Status::invalid_argument(fmt::format("{} '{}' is too large", what, excerpt(text)));
  }
  const double whole = std::floor(value);
  time.whole = static_cast<std::uint64_t>(whole);
  time.fraction = value - whole;
  return time;
}

}  // namespace flashdir::sim::detail
