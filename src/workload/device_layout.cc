// Device folding. The devices of a multi-device trace (SPC ASUs, MSR disks, the DiskSim
// traces derived from them) each start at address 0, so replaying them into one logical space
// as they are would make unrelated data collide. Each device gets a range of its own instead,
// in ascending device order; a range starts on a 1 MiB boundary so that requests keep the
// alignment they had on their device (page and block alignment matter to the FTL).
#include <absl/container/flat_hash_map.h>
#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <vector>

#include "trace_layout.h"

namespace flashdir::sim::detail {
namespace {

constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::uint64_t>::max();

}  // namespace

Status lay_out_devices(Trace& trace, bool fold) {
  // Devices of real traces interleave request by request, so the per-request look-up must be
  // cheap: a hash map from device number to its range, sorted into device order afterwards.
  std::vector<DeviceRange> ranges;
  absl::flat_hash_map<std::uint32_t, std::size_t> index_of;
  for (const IoRequest& request : trace.requests) {
    const auto [it, inserted] = index_of.try_emplace(request.device, ranges.size());
    if (inserted) ranges.push_back(DeviceRange{request.device, 0, 0, 0});
    DeviceRange& range = ranges[it->second];
    range.end_bytes = std::max(range.end_bytes, request.end_bytes());
    ++range.request_count;
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const DeviceRange& a, const DeviceRange& b) { return a.device < b.device; });

  if (fold) {
    std::uint64_t next_base = 0;
    for (DeviceRange& range : ranges) {
      const std::uint64_t extent = range.end_bytes;  // still relative to the device's own 0
      if (extent > kMaxBytes - next_base) {
        return Status::invalid_argument(fmt::format(
            "{}: folding the devices into one address space needs more than 2^64 bytes "
            "(device {} would end beyond it); replay one device instead",
            trace.source, range.device));
      }
      range.base_bytes = next_base;
      range.end_bytes = next_base + extent;
      const std::uint64_t rounded = range.end_bytes + (kDeviceAlignmentBytes - 1);
      // The next base is the end rounded up to 1 MiB; past the top of the space no device can
      // follow, which the check above reports if another device exists.
      next_base = rounded < range.end_bytes ? kMaxBytes : rounded & ~(kDeviceAlignmentBytes - 1);
    }
    for (std::size_t i = 0; i < ranges.size(); ++i) index_of[ranges[i].device] = i;
    for (IoRequest& request : trace.requests) {
      request.offset_bytes += ranges[index_of.find(request.device)->second].base_bytes;
    }
  }

  trace.devices = std::move(ranges);
  return Status::ok();
}

}  // namespace flashdir::sim::detail
