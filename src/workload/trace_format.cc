// Format names and auto-detection. Detection looks at the shape of the first request line
// only, which is enough because the three formats differ in separator and operation field;
// every later line must then parse in that format, so a mixed file still fails loudly.
#include <fmt/format.h>

#include "text_fields.h"
#include "trace_record.h"

namespace flashdir::sim {

const char* trace_format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::automatic: return "auto";
    case TraceFormat::disksim: return "disksim";
    case TraceFormat::spc: return "spc";
    case TraceFormat::msr: return "msr";
  }
  return "unknown";
}

Result<TraceFormat> parse_trace_format(std::string_view name) {
  for (auto format :
       {TraceFormat::automatic, TraceFormat::disksim, TraceFormat::spc, TraceFormat::msr}) {
    if (name == trace_format_name(format)) return format;
  }
  if (name == "automatic") return TraceFormat::automatic;
  return Status::invalid_argument(fmt::format(
      "unknown trace format '{}' (expected auto, disksim, spc or msr)", detail::excerpt(name)));
}

namespace detail {

Result<TraceFormat> detect_trace_format(std::string_view line) {
  if (line.find(',') != std::string_view::npos) {
    const Fields fields = split_commas(line);
    // The operation field tells the two CSV formats apart: "r"/"w" in SPC, "Read"/"Write" in
    // MSR.
    if (fields.count >= 5) {
      const std::string_view op = fields[3];
      if (fields.count == 7 && (equals_ignoring_case(op, "read") || equals_ignoring_case(op, "write"))) {
        return TraceFormat::msr;
      }
      if (equals_ignoring_case(op, "r") || equals_ignoring_case(op, "w")) return TraceFormat::spc;
    }
  } else if (split_whitespace(line).count == 5) {
    return TraceFormat::disksim;
  }
  return Status::invalid_argument(fmt::format(
      "cannot tell the trace format from '{}': expected DiskSim (time device sector sectors "
      "type), SPC (ASU,LBA,bytes,r|w,seconds) or MSR "
      "(Timestamp,Hostname,Disk,Read|Write,Offset,Size,ResponseTime)",
      excerpt(line)));
}

}  // namespace detail
}  // namespace flashdir::sim
