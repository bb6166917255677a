#include <catch2/catch.hpp>

#include "trace_text.h"

using namespace flashdir;
using namespace flashdir::sim;
using flashdir::sim::testing::parse_error;
using flashdir::sim::testing::parse_text;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Three devices, listed out of order, whose address spaces overlap.
constexpr const char* kThreeDevices =
    "0 5 0 8 1\n"            // device 5: [0, 4 KiB)
    "10 2 100 8 0\n"         // device 2: [50 KiB, 54 KiB)
    "20 5 4096 16 1\n"       // device 5: [2 MiB, 2 MiB + 8 KiB)
    "30 7 2048 4 0\n"        // device 7: [1 MiB, 1 MiB + 2 KiB)
    "40 2 0 1 1\n";          // device 2: [0, 512)

}  // namespace

TEST_CASE("folding gives each device its own 1 MiB-aligned range", "[workload][trace][devices]") {
  const auto trace = parse_text(kThreeDevices);  // fold_devices is the default
  REQUIRE(trace.is_ok());
  REQUIRE(trace->devices.size() == 3);
  // Ascending device order; each base is the previous end rounded up to 1 MiB.
  CHECK(trace->devices[0] == DeviceRange{2, 0, 54 * 1024, 2});
  CHECK(trace->devices[1] == DeviceRange{5, 1 * kMiB, 1 * kMiB + 2 * kMiB + 8 * 1024, 2});
  CHECK(trace->devices[2] == DeviceRange{7, 4 * kMiB, 4 * kMiB + kMiB + 2048, 1});
  CHECK(trace->footprint_bytes == 4 * kMiB + kMiB + 2048);

  // Each request moved by its device's base, and nothing else changed.
  const auto& r = trace->requests;
  CHECK(r[0].offset_bytes == 1 * kMiB + 0);
  CHECK(r[1].offset_bytes == 0 + 100 * 512);
  CHECK(r[2].offset_bytes == 1 * kMiB + 4096 * 512);
  CHECK(r[3].offset_bytes == 4 * kMiB + 2048 * 512);
  CHECK(r[4].offset_bytes == 0);
  CHECK(r[3].device == 7);
  CHECK(r[3].size_bytes == 4 * 512);
}

TEST_CASE("folded device ranges never overlap and every request lies in its device's range",
          "[workload][trace][devices]") {
  // Devices whose highest byte falls exactly on, just before and just after a MiB boundary.
  const auto trace = parse_text(
      "0 0 2040 8 1\n"   // device 0 ends at exactly 1 MiB
      "0 1 2039 8 1\n"   // device 1 ends 512 B before 1 MiB
      "0 3 2041 8 1\n"   // device 3 ends 512 B after 1 MiB
      "0 9 0 1 1\n");
  REQUIRE(trace.is_ok());
  const auto& devices = trace->devices;
  REQUIRE(devices.size() == 4);
  CHECK(devices[0].base_bytes == 0);
  CHECK(devices[1].base_bytes == 1 * kMiB);  // an end on a boundary is already aligned
  CHECK(devices[2].base_bytes == 2 * kMiB);
  CHECK(devices[3].base_bytes == 4 * kMiB);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    CHECK(devices[i].base_bytes % kDeviceAlignmentBytes == 0);
    if (i > 0) CHECK(devices[i].base_bytes >= devices[i - 1].end_bytes);
  }
  for (const auto& request : trace->requests) {
    const auto& range = *std::find_if(devices.begin(), devices.end(),
                                      [&](const DeviceRange& d) { return d.device == request.device; });
    CHECK(request.offset_bytes >= range.base_bytes);
    CHECK(request.end_bytes() <= range.end_bytes);
  }
}

TEST_CASE("without folding the device address spaces stay as they are",
          "[workload][trace][devices]") {
  TraceOptions options;
  options.fold_devices = false;
  const auto trace = parse_text(kThreeDevices, options);
  REQUIRE(trace.is_ok());
  CHECK(trace->requests[2].offset_bytes == 4096 * 512);
  CHECK(trace->footprint_bytes == 4096 * 512 + 16 * 512);
  for (const auto& range : trace->devices) CHECK(range.base_bytes == 0);
}

TEST_CASE("only_device keeps one device, unmoved, with times from its first request",
          "[workload][trace][devices]") {
  TraceOptions options;
  options.only_device = 2;
  const auto trace = parse_text(kThreeDevices, options);
  REQUIRE(trace.is_ok());
  REQUIRE(trace->requests.size() == 2);
  CHECK(trace->requests[0] == IoRequest{0, IoRequest::Op::write, 2, 100 * 512, 8 * 512});
  CHECK(trace->requests[1] == IoRequest{30, IoRequest::Op::read, 2, 0, 512});
  CHECK(trace->devices == std::vector<DeviceRange>{{2, 0, 54 * 1024, 2}});
  CHECK(trace->footprint_bytes == 54 * 1024);
  CHECK(trace->reads == 1);
  CHECK(trace->writes == 1);
}

TEST_CASE("only_device naming an absent device is an error listing the devices",
          "[workload][trace][devices]") {
  TraceOptions options;
  options.only_device = 3;
  CHECK(parse_error(kThreeDevices, options) ==
        "test.trace: device 3 does not occur in the trace (it has devices 2, 5, 7)");
  // Lines of other devices are still checked.
  CHECK(parse_error("0 5 0 8 1\n1 5 0 0 1\n", options) == "test.trace:2: size 0 is not positive");
}

TEST_CASE("folding that would pass 2^64 bytes is an error", "[workload][trace][devices]") {
  // Two devices each reaching near the top of the 64-bit space.
  CHECK_THAT(parse_error("0 0 36028797018963000 8 1\n0 1 36028797018963000 8 1\n"),
             Catch::Contains("more than 2^64 bytes") && Catch::Contains("device 1"));
}
