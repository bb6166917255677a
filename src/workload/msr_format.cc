// The MSR Cambridge block traces (SNIA IOTTA), CSV without a header:
//   Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
// time stamp in Windows file time (100 ns ticks), Type Read/Write in any case, offset and size
// in bytes. The response time belongs to the traced system, not to us: checked, not kept.
#include <fmt/format.h>

#include "text_fields.h"
#include "trace_record.h"

namespace flashdir::sim::detail {

Result<TraceRecord> parse_msr_line(std::string_view line) {
  const Fields fields = split_commas(line);
  if (fields.count != 7) {
    return Status::invalid_argument(fmt::format("expected 7 fields, found {}", fields.count));
  }
  TraceRecord record;
  auto ticks = parse_u64(fields[0], "time stamp");
  if (!ticks.is_ok()) return ticks.status();
  record.time.whole = *ticks;

  if (fields[1].empty()) return Status::invalid_argument("host name is empty");

  auto device = parse_u32(fields[2], "disk number");
  if (!device.is_ok()) return device.status();
  record.device = *device;

  const std::string_view op = fields[3];
  if (equals_ignoring_case(op, "read")) {
    record.op = IoRequest::Op::read;
  } else if (equals_ignoring_case(op, "write")) {
    record.op = IoRequest::Op::write;
  } else {
    return Status::invalid_argument(
        fmt::format("unknown operation '{}' (expected Read or Write)", excerpt(op)));
  }

  auto offset = parse_u64(fields[4], "offset");
  if (!offset.is_ok()) return offset.status();
  record.offset_bytes = *offset;

  auto size = parse_u64(fields[5], "size");
  if (!size.is_ok()) return size.status();
  record.size_bytes = *size;

  auto response = parse_u64(fields[6], "response time");
  if (!response.is_ok()) return response.status();

  FLASHDIR_TRY(check_extent(record.offset_bytes, record.size_bytes));
  return record;
}

}  // namespace flashdir::sim::detail
