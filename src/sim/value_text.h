// Reading and writing the values of configuration keys as text. Messages say what is wrong
// with the value; the caller prefixes the key ("op=x: ...").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flashdir/status.h"

namespace flashdir::sim::value_text {

// A whole decimal number, or hexadecimal with 0x (seeds often come in hex).
Result<std::uint64_t> parse_unsigned(std::string_view text);
// A finite decimal number ("0.9", "1e6").
Result<double> parse_real(std::string_view text);
// on/off, true/false, yes/no, 1/0.
Result<bool> parse_switch(std::string_view text);

// The shortest spelling parse_size reads back exactly: 65536 -> "64K", 100 -> "100".
std::string size_text(std::uint64_t bytes);
// A real number without trailing zeros: 0.9 -> "0.9", 1 -> "1".
std::string real_text(double value);

}  // namespace flashdir::sim::value_text
