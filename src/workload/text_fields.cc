#include "text_fields.h"

#include <charconv>
#include <fmt/format.h>
#include <limits>

namespace flashdir::sim::detail {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

void add(Fields& fields, std::string_view field) {
  if (fields.count < Fields::kMaxFields) fields.field[fields.count] = field;
  ++fields.count;
}

}  // namespace

Fields split_whitespace(std::string_view line) {
  Fields fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    add(fields, line.substr(start, i - start));
  }
  return fields;
}

Fields split_commas(std::string_view line) {
  Fields fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      add(fields, trim(line.substr(start)));
      return fields;
    }
    add(fields, trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

bool is_blank_or_comment(std::string_view line) {
  const std::string_view content = trim(line);
  return content.empty() || content.front() == '#';
}

namespace {

bool is_printable(char c) {
  return c >= 0x20 && c < 0x7f;
}

}  // namespace

std::string excerpt(std::string_view text, std::size_t limit) {
  std::string shown;
  for (const char c : text.substr(0, limit)) {
    if (is_printable(c)) {
      shown += c;
    } else {
      shown += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  return text.size() <= limit ? shown : shown + "...";
}

bool has_binary_bytes(std::string_view line) {
  for (const char c : line) {
    if (!is_printable(c) && c != '\t') return true;
  }
  return false;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

Result<std::uint64_t> parse_u64(std::string_view text, std::string_view what) {
  if (text.empty()) return Status::invalid_argument(fmt::format("{} is empty", what));
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return Status::invalid_argument(fmt::format("{} '{}' is too large", what, excerpt(text)));
  }
  if (ec != std::errc() || ptr != end) {
    return Status::invalid_argument(
        fmt::format("invalid {} '{}' (expected a whole number)", what, excerpt(text)));
  }
  return value;
}

Result<std::uint32_t> parse_u32(std::string_view text, std::string_view what) {
  auto value = parse_u64(text, what);
  if (!value.is_ok()) return value.status();
  if (*value > std::numeric_limits<std::uint32_t>::max()) {
    return Status::invalid_argument(fmt::format("{} '{}' is too large", what, excerpt(text)));
  }
  return static_cast<std::uint32_t>(*value);
}

}  // namespace flashdir::sim::detail
