// Workloads for flashdir-sim: block I/O traces read from the formats people already have
// (DiskSim ASCII, UMass/SPC, MSR Cambridge) and seeded synthetic workloads (uniform, Zipf,
// sequential). Both end up as the same thing, a Trace: requests in arrival order, in one byte
// address space, with nanosecond arrival times that start at 0.
//
// Everything here is deterministic: a trace file always loads to the same requests, and a
// synthetic spec with a given seed always generates the same ones (randomness comes only from
// SeededRandom). Malformed input is an error naming the source, the line and what was wrong;
// nothing is skipped silently except blank lines and `#` comment lines.
//
// Thread safety: free functions are reentrant; a SyntheticGenerator is not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashdir/status.h"

namespace flashdir::sim {

// One host request: a run of consecutive bytes, never split (the FTL's policies depend on the
// request size, DESIGN.md "ftl").
struct IoRequest {
  enum class Op : std::uint8_t { read, write };

  std::uint64_t arrival_ns = 0;  // since the first request of the trace
  Op op = Op::read;
  std::uint32_t device = 0;  // as numbered in the trace; see Trace::devices for its range
  std::uint64_t offset_bytes = 0;  // in the trace's (possibly folded) address space
  std::uint64_t size_bytes = 0;    // never 0

  bool is_read() const { return op == Op::read; }
  std::uint64_t end_bytes() const { return offset_bytes + size_bytes; }
  bool operator==(const IoRequest&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Traces

enum class TraceFormat {
  automatic,  // decided by the first request line
  disksim,    // "arrival_time device start_sector size_in_sectors type", 512 B sectors, 1 = read
  spc,        // UMass: "ASU,LBA,size_bytes,opcode,timestamp_s", 512 B sectors, r/w
  msr,        // MSR Cambridge: "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"
};

// "auto", "disksim", "spc", "msr".
const char* trace_format_name(TraceFormat format);
// The inverse of trace_format_name; "automatic" is accepted too.
Result<TraceFormat> parse_trace_format(std::string_view name);

struct TraceOptions {
  TraceFormat format = TraceFormat::automatic;
  // DiskSim times carry no unit. The shared traces (bench/traces) give nanoseconds; classic
  // DiskSim traces give milliseconds (use 1e6). Must be finite and positive.
  double disksim_time_unit_ns = 1.0;
  // Keep only this device's requests (offsets unchanged, times re-based so the first kept
  // request arrives at 0). Takes precedence over fold_devices. A device that does not occur is
  // an error.
  std::optional<std::uint32_t> only_device;
  // The devices of a trace have overlapping address spaces. Folding gives each one its own
  // range: ranges in ascending device order, each starting at the first 1 MiB boundary at or
  // after the end of the previous one (the first at 0), so no two devices overlap and every
  // request keeps its alignment up to 1 MiB. Without folding the offsets are left as they are.
  bool fold_devices = true;
};

// Where one device's requests landed.
struct DeviceRange {
  std::uint32_t device = 0;
  std::uint64_t base_bytes = 0;  // added to the device's own offsets (0 unless folded)
  std::uint64_t end_bytes = 0;   // end of the device's highest byte addressed, after the base
  std::uint64_t request_count = 0;
  bool operator==(const DeviceRange&) const = default;
};

inline constexpr std::uint64_t kDeviceAlignmentBytes = std::uint64_t{1} << 20;

struct Trace {
  std::vector<IoRequest> requests;  // in file order; arrival_ns non-decreasing, first = 0
  std::string source;               // the path or name given, for messages and reports
  std::string format;               // "disksim", "spc", "msr" or "synthetic"
  std::vector<DeviceRange> devices;  // ascending device number

  // Summary of `requests`.
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t footprint_bytes = 0;  // end of the highest byte addressed (after folding)
  std::uint64_t duration_ns = 0;      // arrival time of the last request
  // Requests whose time lay before their predecessor's and were moved up to it (see
  // load_trace). Usually 0; a large number hints at a wrong format or time unit.
  std::uint64_t clamped_arrivals = 0;

  std::uint64_t request_count() const { return requests.size(); }
};

// Reads a trace file. Lines are "\n" or "\r\n" terminated; blank lines and lines whose first
// non-blank character is `#` are skipped, every other line is one request or an error
// "<path>:<line>: <what was wrong>". With TraceFormat::automatic the first request line decides
// the format for the whole file.
//
// Times: each request's time is taken relative to the first request's (which arrives at 0).
// Requests stay in file order; a time earlier than its predecessor's is clamped up to it, so
// arrival_ns never decreases (counted in Trace::clamped_arrivals). A trace without any request
// is an error.
//
// Errors: not_found / io_error for the file, invalid_argument for its contents or `options`.
Result<Trace> load_trace(const std::filesystem::path& path, const TraceOptions& options);
// The same from a stream; `name` stands for the path in messages and in Trace::source.
Result<Trace> parse_trace(std::istream& in, std::string_view name, const TraceOptions& options);

// ---------------------------------------------------------------------------------------------
// Synthetic workloads
//
// The working set is cut into aligned slots: offsets k * alignment_bytes for which a whole
// request fits below working_set_bytes. Each request addresses one slot and is a read with
// probability read_ratio. Arrivals are evenly spaced by interarrival_ns (0: all at time 0,
// i.e. closed-loop replay).
//   uniform     every slot equally likely
//   zipf        slot of popularity rank r (1 = hottest) has probability proportional to
//               1 / r^zipf_theta (theta 0 = uniform, 0.99 = YCSB's default skew). Ranks are
//               scattered over the working set by a seeded permutation, so the hot slots are
//               not simply the first ones.
//   sequential  from offset 0, each request at the first slot at or after the previous
//               request's end, wrapping around to 0 where the next request would not fit.

struct SyntheticSpec {
  enum class Pattern { uniform, zipf, sequential };

  // The parse_synthetic key of each field is given after it.
  Pattern pattern = Pattern::uniform;          // uniform | zipf[:theta] | seq | sequential
  double zipf_theta = 0.99;                    // zipf:THETA, in [0, kMaxZipfTheta]
  double read_ratio = 0.5;                     // read=RATIO, in [0, 1]
  std::uint64_t working_set_bytes = 0;         // ws=SIZE, required
  std::uint64_t request_bytes = 4096;          // size=SIZE
  std::uint64_t request_count = 0;             // count=N, required
  std::uint64_t alignment_bytes = 4096;        // align=SIZE
  std::uint64_t interarrival_ns = 0;           // interarrival=TIME (ns, or with ns/us/ms/s)
  std::uint64_t seed = 1;                      // seed=N

  bool operator==(const SyntheticSpec&) const = default;
};

inline constexpr double kMaxZipfTheta = 10.0;
// generate() holds the whole trace in memory; beyond this, stream with SyntheticGenerator.
inline constexpr std::uint64_t kMaxGeneratedRequests = 100'000'000;

// Checks every field; the message names the bad one by its parse_synthetic key and value,
// e.g. "read=1.5: read ratio must be between 0 and 1".
Status validate(const SyntheticSpec& spec);

// "zipf:0.99,read=0.7,ws=1G,size=4K,count=100000,seed=7": a pattern, then key=value options
// (keys above; sizes as parse_size takes them: 4096, 4K, 1G; counts and seeds as plain
// integers, seeds also in 0x hex). ws= and count= are required, each key at most once.
// The result is validated.
Result<SyntheticSpec> parse_synthetic(std::string_view text);
// The spec in the syntax parse_synthetic reads, every key spelled out; a round trip gives the
// same spec. Tools print it (with the seed) before running.
std::string to_string(const SyntheticSpec& spec);

// Streams the requests of a spec without holding them: for runs longer than memory allows.
// generate() is this collected into a Trace, so both give the same requests.
class SyntheticGenerator {
 public:
  // Validates the spec.
  static Result<SyntheticGenerator> create(const SyntheticSpec& spec);

  SyntheticGenerator(SyntheticGenerator&&) noexcept;
  SyntheticGenerator& operator=(SyntheticGenerator&&) noexcept;
  ~SyntheticGenerator();

  // The next request; nullopt once request_count requests have been produced.
  std::optional<IoRequest> next();
  std::uint64_t remaining() const;
  // Number of slots the working set holds (see above).
  std::uint64_t slot_count() const;

 private:
  struct State;
  explicit SyntheticGenerator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// All requests of a spec as a Trace (format "synthetic", source to_string(spec), device 0).
// Refuses request counts above kMaxGeneratedRequests.
Result<Trace> generate(const SyntheticSpec& spec);

}  // namespace flashdir::sim
