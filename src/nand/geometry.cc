#include "flashdir/geometry.h"

#include "flashdir/format.h"
#include "flashdir/size.h"

#include <bit>
#include <fmt/format.h>

namespace flashdir {

Status Geometry::check_page_size(std::uint32_t page_size_bytes) {
  if (page_size_bytes == 0 || !std::has_single_bit(page_size_bytes)) {
    return Status::invalid_argument(fmt::format("page size {} B is not a power of two", page_size_bytes));
  }
  if (page_size_bytes < kMinPageSizeBytes || page_size_bytes > kMaxPageSizeBytes) {
    return Status::invalid_argument(
        fmt::format("page size {} B is outside [{}, {}] B", page_size_bytes, kMinPageSizeBytes, kMaxPageSizeBytes));
  }
  return Status::ok();
}

Status Geometry::check_oob_size(std::uint32_t oob_size_bytes) {
  constexpr auto kOobRecordBytes = static_cast<std::uint32_t>(format::kOobRecordSize);
  if (oob_size_bytes < kOobRecordBytes || oob_size_bytes > kMaxOobSizeBytes) {
    return Status::invalid_argument(fmt::format("OOB size {} B is outside [{}, {}] B (the OOB record needs {} B)",
                                                oob_size_bytes, kOobRecordBytes, kMaxOobSizeBytes, kOobRecordBytes));
  }
  return Status::ok();
}

Status Geometry::check_pages_per_block(std::uint32_t pages_per_block) {
  if (pages_per_block < kMinPagesPerBlock || pages_per_block > kMaxPagesPerBlock) {
    return Status::invalid_argument(
        fmt::format("pages per block {} is outside [{}, {}]", pages_per_block, kMinPagesPerBlock, kMaxPagesPerBlock));
  }
  return Status::ok();
}

Status Geometry::validate() const {
  FLASHDIR_TRY(check_page_size(page_size_bytes));
  FLASHDIR_TRY(check_oob_size(oob_size_bytes));
  FLASHDIR_TRY(check_pages_per_block(pages_per_block));
  if (block_count == 0) return Status::invalid_argument("block count is zero");
  if (block_count > max_block_count(pages_per_block)) {
    return Status::invalid_argument(fmt::format("block count {} is too large (at most {} blocks of {} pages)",
                                                block_count, max_block_count(pages_per_block), pages_per_block));
  }
  return Status::ok();
}

std::string Geometry::describe() const {
  return fmt::format("{}: {} blocks x {} pages x {} B (+{} B OOB)", format_size(capacity_bytes()), block_count,
                     pages_per_block, page_size_bytes, oob_size_bytes);
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
  return Status::invalid_argument(fmt::format("unknown latency preset '{}' (expected slc, mlc or zero)", name));
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
