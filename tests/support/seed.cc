#include "seed.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fmt/format.h>

namespace flashdir::testing {
namespace {

std::string test_command() {
  return fmt::format("{} '{}'", Catch::getCurrentContext().getConfig()->name(),
                     Catch::getResultCapture().getCurrentTestName());
}

}  // namespace

std::uint64_t test_seed(std::uint64_t fallback) {
  const char* text = std::getenv("FLASHDIR_TEST_SEED");
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 0);
}

std::uint64_t test_knob(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 0);
}

std::string replay_command(std::uint64_t seed) {
  return fmt::format("FLASHDIR_TEST_SEED={} {}", seed, test_command());
}

SeededRuns::SeededRuns(std::uint64_t default_base) : base_(test_seed(default_base)) {
  const char* text = std::getenv("FLASHDIR_TEST_RUN");
  if (text == nullptr || *text == '\0') return;
  only_ = true;
  only_run_ = std::strtoull(text, nullptr, 0);
}

bool SeededRuns::selected(std::uint64_t run) const { return !only_ || run == only_run_; }

std::string SeededRuns::replay_command(std::uint64_t run) const {
  return fmt::format("FLASHDIR_TEST_SEED={} FLASHDIR_TEST_RUN={} {}", base_, run, test_command());
}

}  // namespace flashdir::testing
