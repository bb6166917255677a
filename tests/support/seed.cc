#include "seed.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fmt/format.h>

namespace flashdir::testing {

std::uint64_t test_seed(std::uint64_t fallback) {
  const char* text = std::getenv("FLASHDIR_TEST_SEED");
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 0);
}

std::string replay_command(std::uint64_t seed) {
  return fmt::format("FLASHDIR_TEST_SEED={} {} '{}'", seed, Catch::getCurrentContext().getConfig()->name(),
                     Catch::getResultCapture().getCurrentTestName());
}

}  // namespace flashdir::testing
