// Engine::stop (doc/cache.md "Stopping"): the daemon stops the engine when the cache disk runs
// short of room. The write-back data it holds, fsync'd or not, survives the stop and goes back to
// its files at the restart that resumes the cache.
#include <catch2/catch.hpp>

#include "engine_rig.h"

using flashdir::Status;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;
using flashdir::testing::write_back_options;

namespace {

std::vector<std::uint8_t> concat(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("stop: unsynced write-back data that extends its file is kept and goes back at the restart") {
  EngineRig rig(write_back_options());
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 2 * P));
  rig.put("clean", pattern(2, P));
  CHECK(rig.read_through("clean", 0, P) == pattern(2, P));
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, P, pattern(3, 4 * P)).is_ok());  // no fsync; the file grows to 5 pages
  CHECK(rig.get("f").size() == 2 * P);                                // only the cache holds the new bytes

  REQUIRE(rig.engine().stop(Status::no_space("the cache disk is full")).is_ok());
  const auto stopped = rig.engine().stopped();
  REQUIRE(stopped.has_value());
  CHECK(stopped->message().find("the cache disk is full") != std::string::npos);
  const auto unwritten = rig.engine().files_with_unwritten_data();
  REQUIRE(unwritten.size() == 1);
  CHECK(unwritten.front().relative_path == "f");
  // Every later call fails with the reason; the backing file has the size the data needs.
  CHECK_FALSE(rig.engine().write(*file, 0, pattern(4, P)).is_ok());
  CHECK_FALSE(rig.engine().open_file("clean").is_ok());
  CHECK(rig.get("f").size() == 5 * P);
  // A second stop changes nothing.
  CHECK(rig.engine().stop(Status::io_error("again")).is_ok());
  CHECK(rig.engine().stopped()->message().find("the cache disk is full") != std::string::npos);

  // The stopped engine is left as a power cut leaves it; the restart writes the data back.
  REQUIRE(rig.power_cycle().is_ok());
  CHECK(rig.engine().stats().restart.written_back_slots == 4);
  CHECK(rig.get("f") == concat(pattern(1, P), pattern(3, 4 * P)));
  CHECK(rig.read_through("f", 0, 5 * P) == concat(pattern(1, P), pattern(3, 4 * P)));
  CHECK_FALSE(rig.engine().stopped().has_value());
}

TEST_CASE("stop: an engine holding no write-back data names no file") {
  EngineRig rig(write_back_options());
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 2 * P));
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, 0, pattern(2, P)).is_ok());
  REQUIRE(rig.engine().write_back(*file).is_ok());  // close(2): the data is back
  REQUIRE(rig.engine().stop(Status::no_space("full")).is_ok());
  CHECK(rig.engine().files_with_unwritten_data().empty());
  const auto backing = rig.get("f");
  REQUIRE(backing.size() == 2 * P);
  CHECK(std::vector<std::uint8_t>(backing.begin(), backing.begin() + P) == pattern(2, P));
}
