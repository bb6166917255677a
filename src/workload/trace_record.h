// One request as a trace line states it, before the reader turns its time into nanoseconds
// since the first request and folds its device into the common address space. Each format
// has one function that turns a line into a TraceRecord (one file each: *_format.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "flashdir/sim/workload.h"
#include "flashdir/status.h"

namespace flashdir::sim::detail {

// A time stamp in the format's own unit, split into a whole and a fractional part. Why not a
// double: MSR time stamps are Windows file times (~1.3e17 ticks of 100 ns), beyond the 2^53
// that a double holds exactly, yet their differences are small; keeping the whole part as an
// integer lets the reader subtract the first time stamp exactly before converting.
struct TraceTime {
  std::uint64_t whole = 0;
  double fraction = 0.0;  // in [0, 1)
};

// "123", "123.456", ".5", "1.5e-3": a non-negative decimal number; `what` names the field.
Result<TraceTime> parse_trace_time(std::string_view text, std::string_view what);

struct TraceRecord {
  TraceTime time;
  IoRequest::Op op = IoRequest::Op::read;
  std::uint32_t device = 0;
  std::uint64_t offset_bytes = 0;
  std::uint64_t size_bytes = 0;
};

inline constexpr std::uint64_t kSectorBytes = 512;

// Each takes one request line (neither blank nor a comment, no line terminator) and returns
// the record or a message without location. The time unit of each format, in ns, is below.
Result<TraceRecord> parse_disksim_line(std::string_view line);
Result<TraceRecord> parse_spc_line(std::string_view line);
Result<TraceRecord> parse_msr_line(std::string_view line);

inline constexpr double kSpcTimeUnitNs = 1e9;  // seconds
inline constexpr double kMsrTimeUnitNs = 100;  // Windows file time ticks

// The format of a trace whose first request line is `line`; never returns automatic.
Result<TraceFormat> detect_trace_format(std::string_view line);

// Checks the byte range of a record: positive size, no overflow past 2^64.
Status check_extent(std::uint64_t offset_bytes, std::uint64_t size_bytes);
// sectors * 512, refusing overflow; `what` names the field.
Result<std::uint64_t> sectors_to_bytes(std::uint64_t sectors, std::string_view what);

}  // namespace flashdir::sim::detail
