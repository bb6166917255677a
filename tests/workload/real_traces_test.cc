// The public traces in bench/traces load completely and match what their README says.
#include <catch2/catch.hpp>

#include <filesystem>

#include "flashdir/sim/workload.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

std::filesystem::path trace_path(const char* name) {
  return std::filesystem::path(FLASHDIR_SOURCE_ROOT) / "bench" / "traces" / name;
}

Trace load(const char* name, const TraceOptions& options = {}) {
  const auto path = trace_path(name);
  INFO(path.string());
  auto trace = load_trace(path, options);
  INFO(trace.status().to_string());
  REQUIRE(trace.is_ok());
  return std::move(trace).value();
}

// What every loaded trace must satisfy whatever its contents.
void check_invariants(const Trace& trace) {
  std::uint64_t previous_arrival = 0;
  std::uint64_t footprint = 0;
  for (const auto& request : trace.requests) {
    REQUIRE(request.size_bytes > 0);
    REQUIRE(request.arrival_ns >= previous_arrival);
    previous_arrival = request.arrival_ns;
    footprint = std::max(footprint, request.end_bytes());
  }
  CHECK(trace.requests.front().arrival_ns == 0);
  CHECK(trace.footprint_bytes == footprint);
  CHECK(trace.reads + trace.writes == trace.request_count());
  std::uint64_t per_device = 0;
  for (std::size_t i = 0; i < trace.devices.size(); ++i) {
    per_device += trace.devices[i].request_count;
    CHECK(trace.devices[i].base_bytes % kDeviceAlignmentBytes == 0);
    if (i > 0) CHECK(trace.devices[i].base_bytes >= trace.devices[i - 1].end_bytes);
  }
  CHECK(per_device == trace.request_count());
  CHECK(trace.devices.back().end_bytes == trace.footprint_bytes);
}

}  // namespace

TEST_CASE("wsrch-small: 24,783 requests of a read-only web search", "[workload][traces]") {
  const Trace trace = load("wsrch-small.trace");
  CHECK(trace.format == "disksim");
  CHECK(trace.request_count() == 24'783);
  CHECK(trace.writes == 4);
  CHECK(trace.reads == 24'779);
  CHECK(trace.devices.size() == 6);
  CHECK(trace.clamped_arrivals == 0);
  // First two lines: "11413000 0 657728 16 1", "11565000 1 31244784 64 1" (times in ns).
  CHECK(trace.requests[0] == IoRequest{0, IoRequest::Op::read, 0, 657728ULL * 512, 16 * 512});
  CHECK(trace.requests[1].arrival_ns == 152'000);
  CHECK(trace.requests[1].device == 1);
  CHECK(trace.requests[1].offset_bytes == trace.devices[1].base_bytes + 31244784ULL * 512);
  CHECK(trace.duration_ns > 50'000'000'000ULL);  // "first ~60 s"
  CHECK(trace.duration_ns < 70'000'000'000ULL);
  check_invariants(trace);
}

TEST_CASE("tpcc-small: 6,999 OLTP requests on 16 devices, 63% reads", "[workload][traces]") {
  const Trace trace = load("tpcc-small.trace");
  CHECK(trace.request_count() == 6'999);
  CHECK(trace.devices.size() == 16);
  CHECK(trace.reads == 4'381);
  const double read_share = static_cast<double>(trace.reads) / static_cast<double>(trace.request_count());
  CHECK(read_share == Approx(0.63).margin(0.01));
  check_invariants(trace);
}

TEST_CASE("financial1-head: 10,000 write-dominant OLTP requests, 41% reads", "[workload][traces]") {
  const Trace trace = load("financial1-head.ascii");
  CHECK(trace.request_count() == 10'000);
  CHECK(trace.reads == 4'078);
  CHECK(trace.writes == 5'922);
  CHECK(trace.devices.size() == 22);
  // Line 5: "78643005 1 55596 6 1".
  CHECK(trace.requests[4].arrival_ns == 78'643'005);
  CHECK(trace.requests[4].is_read());
  check_invariants(trace);
}

TEST_CASE("one device of a real trace", "[workload][traces]") {
  TraceOptions options;
  options.only_device = 3;
  const Trace trace = load("wsrch-small.trace", options);
  const Trace all = load("wsrch-small.trace");
  REQUIRE(all.devices[3].device == 3);
  CHECK(trace.request_count() == all.devices[3].request_count);
  CHECK(trace.devices.size() == 1);
  CHECK(trace.devices[0].base_bytes == 0);
  // The same requests as in the folded trace, minus the fold.
  std::size_t kept = 0;
  for (const auto& request : all.requests) {
    if (request.device != 3) continue;
    REQUIRE(kept < trace.requests.size());
    CHECK(trace.requests[kept].offset_bytes + all.devices[3].base_bytes == request.offset_bytes);
    ++kept;
  }
  check_invariants(trace);
}
