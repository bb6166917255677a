// Validation and printing of a SyntheticSpec. Messages name the field by the key that
// parse_synthetic reads, since that is how users write a spec.
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "synthetic_text.h"

namespace flashdir::sim {

Status validate(const SyntheticSpec& spec) {
  using detail::size_text;
  auto refuse = [](std::string message) { return Status::invalid_argument(std::move(message)); };
  if (spec.pattern == SyntheticSpec::Pattern::zipf &&
      !(std::isfinite(spec.zipf_theta) && spec.zipf_theta >= 0 && spec.zipf_theta <= kMaxZipfTheta)) {
    return refuse(fmt::format("zipf:{}: theta must be between 0 and {}", spec.zipf_theta, kMaxZipfTheta));
  }
  if (!(spec.read_ratio >= 0 && spec.read_ratio <= 1)) {  // also refuses NaN
    return refuse(fmt::format("read={}: read ratio must be between 0 and 1", spec.read_ratio));
  }
  if (spec.working_set_bytes == 0) return refuse("ws=0: working set must be positive");
  if (spec.request_bytes == 0) return refuse("size=0: request size must be positive");
  if (spec.alignment_bytes == 0) return refuse("align=0: alignment must be positive");
  if (spec.request_bytes > spec.working_set_bytes) {
    return refuse(fmt::format("size={}: request size is larger than the working set (ws={})",
                              size_text(spec.request_bytes), size_text(spec.working_set_bytes)));
  }
  if (spec.request_count == 0) return refuse("count=0: request count must be positive");
  if (spec.interarrival_ns != 0 &&
      spec.request_count - 1 > std::numeric_limits<std::uint64_t>::max() / spec.interarrival_ns) {
    return refuse(fmt::format(
        "interarrival={}: the last of count={} requests would arrive beyond 2^64 ns",
        detail::duration_text(spec.interarrival_ns), spec.request_count));
  }
  return Status::ok();
}

std::string to_string(const SyntheticSpec& spec) {
  using detail::size_text;
  return fmt::format("{},read={},ws={},size={},count={},align={},interarrival={},seed={}",
                     detail::pattern_text(spec), spec.read_ratio, size_text(spec.working_set_bytes),
                     size_text(spec.request_bytes), spec.request_count,
                     size_text(spec.alignment_bytes), detail::duration_text(spec.interarrival_ns),
                     spec.seed);
}

}  // namespace flashdir::sim
