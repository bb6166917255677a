// How synthetic-spec values are spelled, shared by the parser, to_string and the validation
// messages, so that an error quotes a value the way the user could have typed it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flashdir/sim/workload.h"
#include "flashdir/status.h"

namespace flashdir::sim::detail {

// 1073741824 -> "1G", 6144 -> "6K", 1000 -> "1000": the largest binary unit that divides it.
std::string size_text(std::uint64_t bytes);
// 5000000 -> "5ms", 1500 -> "1500ns"... the largest decimal time unit that divides it.
std::string duration_text(std::uint64_t ns);
// "uniform", "zipf:0.99", "seq".
std::string pattern_text(const SyntheticSpec& spec);

// "250", "250ns", "10us", "5ms", "1s" -> ns.
Result<std::uint64_t> parse_duration_ns(std::string_view text);

}  // namespace flashdir::sim::detail
