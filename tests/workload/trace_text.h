// Parsing inline trace texts in tests.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "flashdir/sim/workload.h"

namespace flashdir::sim::testing {

// Options that leave device addresses as the trace gives them.
inline TraceOptions unfolded() {
  TraceOptions options;
  options.fold_devices = false;
  return options;
}

inline Result<Trace> parse_text(std::string_view text, TraceOptions options = {},
                                std::string_view name = "test.trace") {
  std::istringstream in{std::string(text)};
  return parse_trace(in, name, options);
}

// The message of a parse that must fail.
inline std::string parse_error(std::string_view text, TraceOptions options = {},
                               std::string_view name = "test.trace") {
  auto trace = parse_text(text, options, name);
  if (trace.is_ok()) return "(parsed without error)";
  return trace.status().message();
}

}  // namespace flashdir::sim::testing
