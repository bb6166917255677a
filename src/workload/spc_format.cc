// The SPC format of the UMass Trace Repository (Financial1/2, WebSearch1-3):
//   ASU,LBA,size_bytes,opcode,timestamp_s[,...]
// LBA in 512-byte sectors, size in bytes, opcode r/R/w/W, time in (fractional) seconds. The
// SPC specification allows optional fields after the time stamp; they are ignored.
#include <fmt/format.h>

#include "text_fields.h"
#include "trace_record.h"

namespace flashdir::sim::detail {

Result<TraceRecord> parse_spc_line(std::string_view line) {
  const Fields fields = split_commas(line);
  if (fields.count < 5) {
    return Status::invalid_argument(
        fmt::format("expected at least 5 fields, found {}", fields.count));
  }
  TraceRecord record;
  auto device = parse_u32(fields[0], "ASU");
  if (!device.is_ok()) return device.status();
  record.device = *device;

  auto lba = parse_u64(fields[1], "LBA");
  if (!lba.is_ok()) return lba.status();
  auto offset = sectors_to_bytes(*lba, "LBA");
  if (!offset.is_ok()) return offset.status();
  record.offset_bytes = *offset;

  auto size = parse_u64(fields[2], "size");
  if (!size.is_ok()) return size.status();
  record.size_bytes = *size;

  const std::string_view op = fields[3];
  if (op == "r" || op == "R") {
    record.op = IoRequest::Op::read;
  } else if (op == "w" || op == "W") {
    record.op = IoRequest::Op::write;
  } else {
    return Status::invalid_argument(
        fmt::format("unknown operation '{}' (expected r or w)", excerpt(op)));
  }

  auto time = parse_trace_time(fields[4], "time stamp");
  if (!time.is_ok()) return time.status();
  record.time = *time;

  FLASHDIR_TRY(check_extent(record.offset_bytes, record.size_bytes));
  return record;
}

}  // namespace flashdir::sim::detail
