// Byte sizes as people write them on command lines and read them in reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flashdir/status.h"

namespace flashdir {

// "4096", "4K", "64M", "1G", "2T", "16KiB": binary multiples. Refuses anything else (and
// overflow) with a message that quotes the text; whether zero makes sense is the caller's call.
Result<std::uint64_t> parse_size(std::string_view text);
// 67108864 -> "64 MiB"; 1536 -> "1.5 KiB"
std::string format_size(std::uint64_t bytes);

}  // namespace flashdir
