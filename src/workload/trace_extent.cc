#include <fmt/format.h>
#include <limits>

#include "trace_record.h"

namespace flashdir::sim::detail {

Status check_extent(std::uint64_t offset_bytes, std::uint64_t size_bytes) {
  // A zero-length request would reach the FTL as an empty run of pages; every format calls it
  // a size, so a 0 is a damaged or misread line, not a no-op.
  if (size_bytes == 0) return Status::invalid_argument("size 0 is not positive");
  if (offset_bytes > std::numeric_limits<std::uint64_t>::max() - size_bytes) {
    return Status::invalid_argument(fmt::format(
        "request at byte {} of {} bytes ends beyond 2^64 bytes", offset_bytes, size_bytes));
  }
  return Status::ok();
}

Result<std::uint64_t> sectors_to_bytes(std::uint64_t sectors, std::string_view what) {
  if (sectors > std::numeric_limits<std::uint64_t>::max() / kSectorBytes) {
    return Status::invalid_argument(
        fmt::format("{} {} is too large (beyond 2^64 bytes)", what, sectors));
  }
  return sectors * kSectorBytes;
}

}  // namespace flashdir::sim::detail
