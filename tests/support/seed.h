// Seeds for randomised tests: FLASHDIR_TEST_SEED overrides the default so that a failure
// printed by one run can be replayed exactly.
#pragma once

#include <cstdint>
#include <string>

namespace flashdir::testing {

// The seed to use: FLASHDIR_TEST_SEED if set, else `fallback`.
std::uint64_t test_seed(std::uint64_t fallback);
// "FLASHDIR_TEST_SEED=<seed> <test binary> '<test name>'": paste it to replay a failure.
std::string replay_command(std::uint64_t seed);
// A loop length a developer may raise for a longer soak: the environment variable `name` if
// set, else `fallback` (kept small for CI; e.g. FLASHDIR_FUZZ_ITERATIONS=1000000 by hand).
std::uint64_t test_knob(const char* name, std::uint64_t fallback);

// A test that loops over numbered runs (one per combination of options, say), run i seeded
// with base + i. FLASHDIR_TEST_RUN=i restricts the test to run i, so that the command printed
// for a failing run replays that run alone, with the seed it had.
class SeededRuns {
 public:
  // The base is FLASHDIR_TEST_SEED if set, else `default_base`.
  explicit SeededRuns(std::uint64_t default_base);

  bool selected(std::uint64_t run) const;
  // Whether every run is done (no FLASHDIR_TEST_RUN): checks over all runs hold only then.
  bool all_selected() const { return !only_; }
  std::uint64_t seed(std::uint64_t run) const { return base_ + run; }
  // "FLASHDIR_TEST_SEED=<base> FLASHDIR_TEST_RUN=<run> <test binary> '<test name>'".
  std::string replay_command(std::uint64_t run) const;

 private:
  std::uint64_t base_;
  bool only_ = false;
  std::uint64_t only_run_ = 0;
};

}  // namespace flashdir::testing
