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

}  // namespace flashdir::testing
