#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "flashdir/sim/workload.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::sim;
using flashdir::testing::replay_command;
using flashdir::testing::test_seed;

namespace {

SyntheticSpec spec_of(SyntheticSpec::Pattern pattern, std::uint64_t slots, std::uint64_t count,
                      std::uint64_t seed) {
  SyntheticSpec spec;
  spec.pattern = pattern;
  spec.working_set_bytes = slots * 4096;
  spec.request_count = count;
  spec.seed = seed;
  return spec;
}

Trace generated(const SyntheticSpec& spec) {
  auto trace = generate(spec);
  INFO(to_string(spec) << ": " << trace.status().to_string());
  REQUIRE(trace.is_ok());
  return std::move(trace).value();
}

// Requests per slot, most popular first.
std::vector<std::uint64_t> sorted_slot_counts(const Trace& trace, std::uint64_t slots) {
  std::vector<std::uint64_t> counts(slots);
  for (const auto& request : trace.requests) ++counts.at(request.offset_bytes / 4096);
  std::sort(counts.rbegin(), counts.rend());
  return counts;
}

double share_of_top(const std::vector<std::uint64_t>& sorted_counts, std::size_t top, std::uint64_t total) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < top; ++i) sum += sorted_counts[i];
  return static_cast<double>(sum) / static_cast<double>(total);
}

}  // namespace

TEST_CASE("a seed reproduces a synthetic workload; another seed does not", "[workload][synthetic]") {
  const std::uint64_t seed = test_seed(42);
  INFO(replay_command(seed));
  for (auto pattern : {SyntheticSpec::Pattern::uniform, SyntheticSpec::Pattern::zipf,
                       SyntheticSpec::Pattern::sequential}) {
    const auto spec = spec_of(pattern, 1000, 2000, seed);
    const Trace a = generated(spec);
    const Trace b = generated(spec);
    CHECK(a.requests == b.requests);
    auto other = spec;
    other.seed = seed + 1;
    // Sequential addresses do not depend on the seed, but the read/write choices do.
    CHECK(generated(other).requests != a.requests);
  }
}

TEST_CASE("the generator streams exactly what generate() collects", "[workload][synthetic]") {
  const auto spec = spec_of(SyntheticSpec::Pattern::zipf, 5000, 3000, 7);
  const Trace trace = generated(spec);
  auto generator = SyntheticGenerator::create(spec);
  REQUIRE(generator.is_ok());
  CHECK(generator->slot_count() == 5000);
  CHECK(generator->remaining() == 3000);
  std::size_t i = 0;
  while (const auto request = generator->next()) {
    REQUIRE(i < trace.requests.size());
    CHECK(*request == trace.requests[i]);
    ++i;
  }
  CHECK(i == 3000);
  CHECK(generator->remaining() == 0);
  CHECK_FALSE(generator->next().has_value());
}

TEST_CASE("a synthetic trace is summarised like a loaded one", "[workload][synthetic]") {
  auto spec = spec_of(SyntheticSpec::Pattern::uniform, 256, 1000, 3);
  spec.interarrival_ns = 2500;
  const Trace trace = generated(spec);
  CHECK(trace.format == "synthetic");
  CHECK(trace.source == to_string(spec));
  CHECK(trace.request_count() == 1000);
  CHECK(trace.reads + trace.writes == 1000);
  CHECK(trace.read_bytes == trace.reads * 4096);
  CHECK(trace.duration_ns == 999 * 2500);
  CHECK(trace.requests[1].arrival_ns == 2500);
  CHECK(trace.footprint_bytes <= spec.working_set_bytes);
  REQUIRE(trace.devices.size() == 1);
  CHECK(trace.devices[0].request_count == 1000);
}

TEST_CASE("the read ratio holds within sampling tolerance", "[workload][synthetic]") {
  const std::uint64_t seed = test_seed(11);
  INFO(replay_command(seed));
  for (double ratio : {0.0, 0.1, 0.5, 0.7, 1.0}) {
    auto spec = spec_of(SyntheticSpec::Pattern::uniform, 1000, 100'000, seed);
    spec.read_ratio = ratio;
    const Trace trace = generated(spec);
    const double observed = static_cast<double>(trace.reads) / 100'000.0;
    INFO("read ratio " << ratio);
    // Five standard deviations of a binomial proportion over 100,000 draws is < 0.008.
    CHECK(observed == Approx(ratio).margin(0.008));
    if (ratio == 0.0) CHECK(trace.reads == 0);
    if (ratio == 1.0) CHECK(trace.writes == 0);
  }
}

TEST_CASE("changing the read ratio leaves the addresses alone", "[workload][synthetic]") {
  auto spec = spec_of(SyntheticSpec::Pattern::zipf, 1000, 1000, 5);
  const Trace a = generated(spec);
  spec.read_ratio = 0.9;
  const Trace b = generated(spec);
  for (std::size_t i = 0; i < a.requests.size(); ++i) CHECK(a.requests[i].offset_bytes == b.requests[i].offset_bytes);
}

TEST_CASE("uniform requests are aligned, inside the working set and spread evenly",
          "[workload][synthetic]") {
  const std::uint64_t seed = test_seed(3);
  INFO(replay_command(seed));
  SyntheticSpec spec = spec_of(SyntheticSpec::Pattern::uniform, 0, 200'000, seed);
  spec.working_set_bytes = 1000 * 4096 + 3000;  // not a whole number of slots
  spec.request_bytes = 8192;                    // two slots long
  const Trace trace = generated(spec);
  std::vector<std::uint64_t> counts(1000);
  for (const auto& request : trace.requests) {
    REQUIRE(request.offset_bytes % 4096 == 0);
    REQUIRE(request.end_bytes() <= spec.working_set_bytes);
    ++counts.at(request.offset_bytes / 4096);
  }
  // 999 slots hold a whole 8 KiB request: mean ~200 per slot, sd ~14.
  CHECK(counts[999] == 0);
  const auto [low, high] = std::minmax_element(counts.begin(), counts.begin() + 999);
  CHECK(*low > 120);
  CHECK(*high < 290);
}

TEST_CASE("zipf 0.99 concentrates requests on few slots; zipf 0 is uniform", "[workload][synthetic]") {
  const std::uint64_t seed = test_seed(99);
  INFO(replay_command(seed));
  constexpr std::uint64_t kSlots = 10'000;
  constexpr std::uint64_t kCount = 200'000;

  auto skewed = spec_of(SyntheticSpec::Pattern::zipf, kSlots, kCount, seed);
  skewed.zipf_theta = 0.99;
  const auto hot = sorted_slot_counts(generated(skewed), kSlots);
  // Exact shares for theta 0.99 over 10,000 ranks: top 1% ~ 0.53, top rank ~ 0.10.
  double harmonic = 0;
  double top_harmonic = 0;
  for (std::uint64_t k = 1; k <= kSlots; ++k) {
    harmonic += std::pow(static_cast<double>(k), -0.99);
    if (k <= kSlots / 100) top_harmonic = harmonic;
  }
  CHECK(share_of_top(hot, kSlots / 100, kCount) == Approx(top_harmonic / harmonic).margin(0.01));
  CHECK(share_of_top(hot, 1, kCount) == Approx(1.0 / harmonic).margin(0.005));

  auto flat = skewed;
  flat.zipf_theta = 0.0;
  const auto cold = sorted_slot_counts(generated(flat), kSlots);
  // Uniform: 20 per slot on average; the top 1% are only the upper tail of that noise.
  CHECK(share_of_top(cold, kSlots / 100, kCount) < 0.02);
  CHECK(cold.back() > 0);
}

TEST_CASE("zipf ranks follow 1/k^theta exactly for a small working set", "[workload][synthetic]") {
  const std::uint64_t seed = test_seed(1234);
  INFO(replay_command(seed));
  for (double theta : {0.5, 1.0, 1.5}) {
    INFO("theta " << theta);
    constexpr std::uint64_t kSlots = 8;
    constexpr std::uint64_t kCount = 400'000;
    auto spec = spec_of(SyntheticSpec::Pattern::zipf, kSlots, kCount, seed);
    spec.zipf_theta = theta;
    const auto counts = sorted_slot_counts(generated(spec), kSlots);
    double norm = 0;
    for (std::uint64_t k = 1; k <= kSlots; ++k) norm += std::pow(static_cast<double>(k), -theta);
    for (std::uint64_t k = 1; k <= kSlots; ++k) {
      const double expected = std::pow(static_cast<double>(k), -theta) / norm;
      const double observed = static_cast<double>(counts[k - 1]) / kCount;
      INFO("rank " << k);
      // sd of a proportion over 400,000 draws is at most 0.0008.
      CHECK(observed == Approx(expected).margin(0.004));
    }
  }
}

TEST_CASE("zipf's hot slots are scattered over the working set", "[workload][synthetic]") {
  const std::uint64_t seed = test_seed(77);
  INFO(replay_command(seed));
  constexpr std::uint64_t kSlots = 100'000;
  const Trace trace = generated(spec_of(SyntheticSpec::Pattern::zipf, kSlots, 100'000, seed));
  std::map<std::uint64_t, std::uint64_t> per_slot;
  for (const auto& request : trace.requests) ++per_slot[request.offset_bytes / 4096];
  std::vector<std::pair<std::uint64_t, std::uint64_t>> by_count;  // (count, slot)
  for (const auto& [slot, count] : per_slot) by_count.emplace_back(count, slot);
  std::sort(by_count.rbegin(), by_count.rend());
  std::uint64_t lowest = kSlots;
  std::uint64_t highest = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    lowest = std::min(lowest, by_count[i].second);
    highest = std::max(highest, by_count[i].second);
  }
  // Unscrambled, the ten hottest would be slots 0..9.
  CHECK(highest - lowest > kSlots / 4);
}

TEST_CASE("zipf works over a huge working set without a table", "[workload][synthetic]") {
  SyntheticSpec spec = spec_of(SyntheticSpec::Pattern::zipf, 0, 1000, 5);
  spec.working_set_bytes = std::uint64_t{1} << 50;  // 2^38 slots
  const Trace trace = generated(spec);
  for (const auto& request : trace.requests) CHECK(request.end_bytes() <= spec.working_set_bytes);
  CHECK(trace.requests.size() == 1000);
}

TEST_CASE("sequential requests follow each other and wrap around the working set",
          "[workload][synthetic]") {
  SyntheticSpec spec = spec_of(SyntheticSpec::Pattern::sequential, 16, 40, 1);
  std::vector<std::uint64_t> offsets;
  for (const auto& request : generated(spec).requests) offsets.push_back(request.offset_bytes);
  for (std::size_t i = 0; i < offsets.size(); ++i) CHECK(offsets[i] == (i % 16) * 4096);

  // A 12 KiB request on 8 KiB alignment starts at the next 8 KiB boundary after its
  // predecessor's end; one that would not fit wraps to 0.
  spec.working_set_bytes = 64 * 1024;
  spec.request_bytes = 12 * 1024;
  spec.alignment_bytes = 8 * 1024;
  spec.request_count = 7;
  offsets.clear();
  for (const auto& request : generated(spec).requests) offsets.push_back(request.offset_bytes);
  const std::uint64_t k = 1024;
  CHECK(offsets == std::vector<std::uint64_t>{0, 16 * k, 32 * k, 48 * k, 0, 16 * k, 32 * k});
}

TEST_CASE("generate() refuses what validate() refuses, and oversized counts",
          "[workload][synthetic]") {
  SyntheticSpec spec = spec_of(SyntheticSpec::Pattern::uniform, 16, 0, 1);
  CHECK(generate(spec).status().message() == "count=0: request count must be positive");
  spec.request_count = kMaxGeneratedRequests + 1;
  CHECK_THAT(generate(spec).status().message(), Catch::Contains("SyntheticGenerator"));
  CHECK(SyntheticGenerator::create(spec).is_ok());  // streaming has no such limit
}
