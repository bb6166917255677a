#include "flashdir/geometry.h"

#include "flashdir/format.h"
#include "flashdir/size.h"

#include <bit>
#include <fmt/format.h>

namespace flashdir {

Status Geometry::validate() const {
  if (page_size_bytes == 0 || !std::has_single_bit(page_size_bytes)) {
    return Status::invalid_argument(
        fmt::format("page size {} B is not a power of two", page_size_bytes));
  }
  if (page_size_bytes < kMinPageSizeBytes || page_size_bytes > kMaxPageSizeBytes) {
    return Status::invalid_argument(fmt::format("page size {} B is outside [{}, {}] B",
                                                page_size_bytes, kMinPageSizeBytes,
                                                kMaxPageSizeBytes));
  }
  constexpr auto kOobRecordBytes = static_cast<std::uint32_t>(format::kOobRecordSize);
  if (oob_size_bytes < kOobRecordBytes || oob_size_bytes > kMaxOobSizeBytes) {
    return Status::invalid_argument(
        fmt::format("OOB size {} B is outside [{}, {}] B (the OOB record needs {} B)",
                    oob_size_bytes, kOobRecordBytes, kMaxOobSizeBytes, kOobRecordBytes));
  }
  if (pages_per_block < 2 || pages_per_block > kMaxPagesPerBlock) {
    return Status::invalid_argument(fmt::format("pages per block {} is outside [2, {}]",
                                                pages_per_block, kMaxPagesPerBlock));
  }
  if (block_count == 0) return Status::invalid_argument("block count is zero");
  // Keep every byte offset of the image representable.
  if (block_count > (std::uint64_t{1} << 40) / pages_per_block) {
    return Status::invalid_argument(fmt::format("block count {} is too large", block_count));
  }
  return Status::ok();
}

std::string Geometry::describe() const {
  return fmt::format("{}: {} blocks x {} pages x {} B (+{} B OOB)", format_size(capacity_bytes()),
                     block_count, pages_per_block, page_size_bytes, oob_size_bytes);
}

Result<Geometry> geometry_for_capacity(std::uint64_t capacity_bytes, std::uint32_t page_size_bytes,
                                       std::uint32_t oob_size_bytes,
                                       std::uint32_t pages_per_block) {
  Geometry g;
  g.page_size_bytes = page_size_bytes;
  g.oob_size_bytes = oob_size_bytes;
  g.pages_per_block = pages_per_block;
  g.block_count = 1;  // validated below once the block size is known to be sane
  FLASHDIR_TRY(g.validate());
  if (capacity_bytes == 0) return Status::invalid_argument("size is zero");
  if (capacity_bytes % g.block_size_bytes() != 0) {
    return Status::invalid_argument(
        fmt::format("size {} B is not a whole number of {} B blocks ({} pages of {} B)",
                    capacity_bytes, g.block_size_bytes(), pages_per_block, page_size_bytes));
  }
  g.block_count = capacity_bytes / g.block_size_bytes();
  FLASHDIR_TRY(g.validate());
  return g;
}

LatencyProfile LatencyProfile::of(LatencyPreset preset) {
  switch (preset) {
    case LatencyPreset::slc: return {preset, 25, 200, 1500};
    case LatencyPreset::mlc: return {preset, 50, 900, 3500};
    case LatencyPreset::zero:
    case LatencyPreset::custom: break;
  }
  return {preset, 0, 0, 0};
}

Result<LatencyProfile> LatencyProfile::parse(std::string_view name) {
  for (auto preset : {LatencyPreset::slc, LatencyPreset::mlc, LatencyPreset::zero}) {
    if (name == latency_preset_name(preset)) return of(preset);
  }
  return Status::invalid_argument(
      fmt::format("unknown latency preset '{}' (expected slc, mlc or zero)", name));
}

const char* latency_preset_name(LatencyPreset preset) {
  switch (preset) {
    case LatencyPreset::zero: return "zero";
    case LatencyPreset::slc: return "slc";
    case LatencyPreset::mlc: return "mlc";
    case LatencyPreset::custom: return "custom";
  }
  return "unknown";
}

}  // namespace flashdir
