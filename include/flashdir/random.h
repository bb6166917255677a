// The seeded random source handed to everything that makes random choices (fault injection,
// synthetic workloads, tests). One seed reproduces a whole run on every platform, which is why
// this does not use std::uniform_int_distribution (its output is implementation-defined).
#pragma once

#include <cstdint>

namespace flashdir {

// xoshiro256** seeded through splitmix64. Not thread-safe; give each thread its own.
class SeededRandom {
 public:
  explicit SeededRandom(std::uint64_t seed);

  std::uint64_t next_u64();
  // Uniform in [0, bound); bound must be non-zero. Lemire's multiply-shift with rejection.
  std::uint64_t uniform(std::uint64_t bound);
  // Uniform in [low, high], inclusive.
  std::uint64_t between(std::uint64_t low, std::uint64_t high);
  // True with probability 1/n; n == 0 means never.
  bool one_in(std::uint64_t n);
  // Uniform in [0, 1).
  double unit();

 private:
  std::uint64_t state_[4];
};

}  // namespace flashdir
