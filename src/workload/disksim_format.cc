// DiskSim's ASCII input format, as MQSim and SSDsim ship their traces:
//   arrival_time device start_sector size_in_sectors type
// whitespace-separated, 512-byte sectors, type 1 = read and 0 = write. The time has no unit of
// its own (TraceOptions::disksim_time_unit_ns).
#include <fmt/format.h>

#include "text_fields.h"
#include "trace_record.h"

namespace flashdir::sim::detail {

Result<TraceRecord> parse_disksim_line(std::string_view line) {
  const Fields fields = split_whitespace(line);
  if (fields.count != 5) {
    return Status::invalid_argument(fmt::format("expected 5 fields, found {}", fields.count));
  }
  TraceRecord record;
  auto time = parse_trace_time(fields[0], "arrival time");
  if (!time.is_ok()) return time.status();
  record.time = *time;

  auto device = parse_u32(fields[1], "device");
  if (!device.is_ok()) return device.status();
  record.device = *device;

  auto sector = parse_u64(fields[2], "start sector");
  if (!sector.is_ok()) return sector.status();
  auto offset = sectors_to_bytes(*sector, "start sector");
  if (!offset.is_ok()) return offset.status();
  record.offset_bytes = *offset;

  auto sectors = parse_u64(fields[3], "size");
  if (!sectors.is_ok()) return sectors.status();
  auto size = sectors_to_bytes(*sectors, "size");
  if (!size.is_ok()) return size.status();
  record.size_bytes = *size;

  // DiskSim's flags word: bit 0 is "read". Other flag bits never occur in block traces, so
  // anything but 0 and 1 means the line is not what we think it is.
  if (fields[4] == "1") {
    record.op = IoRequest::Op::read;
  } else if (fields[4] == "0") {
    record.op = IoRequest::Op::write;
  } else {
    return Status::invalid_argument(fmt::format(
        "unknown operation '{}' (expected 1 for read or 0 for write)", excerpt(fields[4])));
  }
  FLASHDIR_TRY(check_extent(record.offset_bytes, record.size_bytes));
  return record;
}

}  // namespace flashdir::sim::detail
