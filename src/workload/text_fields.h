// Splitting trace lines into fields and reading numbers out of them, without allocating: the
// readers run over millions of lines. Errors are messages without a location; the trace
// reader prefixes "<source>:<line>: ".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "flashdir/status.h"

namespace flashdir::sim::detail {

// The fields of one line. Holds at most kMaxFields views into the line; `count` is the number
// of fields the line really had, so that "expected 5 fields, found 9" can be reported.
struct Fields {
  static constexpr std::size_t kMaxFields = 16;
  std::string_view field[kMaxFields];
  std::size_t count = 0;

  std::string_view operator[](std::size_t i) const { return field[i]; }
};

// Fields separated by runs of spaces and tabs (DiskSim).
Fields split_whitespace(std::string_view line);
// Fields separated by commas, each trimmed of surrounding spaces and tabs (SPC, MSR). An
// empty field stays an empty field.
Fields split_commas(std::string_view line);

std::string_view trim(std::string_view text);
// True for a blank line or a `#` comment line.
bool is_blank_or_comment(std::string_view line);
// `text` cut to at most `limit` bytes, marked with "..." when cut, every byte that is not
// printable ASCII shown as \xNN: quoting a line of unknown length and content in a message.
std::string excerpt(std::string_view text, std::size_t limit = 60);
// True when `line` holds a byte that no text trace has: a control character other than tab,
// or a byte outside ASCII. Traces are ASCII; such a byte means a binary or corrupt file.
bool has_binary_bytes(std::string_view line);
bool equals_ignoring_case(std::string_view a, std::string_view b);

// A whole decimal number with nothing around it; `what` names the field in the message:
// "invalid start sector 'x1'".
Result<std::uint64_t> parse_u64(std::string_view text, std::string_view what);
Result<std::uint32_t> parse_u32(std::string_view text, std::string_view what);

}  // namespace flashdir::sim::detail
