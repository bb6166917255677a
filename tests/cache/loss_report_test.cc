// Losses of fsync'd write-back data are never silent (issue 18 §2): a restart names every file
// whose data it lost or may have lost, and a damaged dirty page a read finds reaches the file's
// next fsync or close, once.
#include <catch2/catch.hpp>

#include "engine_rig.h"

using flashdir::StatusCode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;
using flashdir::testing::write_back_options;

namespace {

}  // namespace

TEST_CASE("loss report: a damaged metadata page that described fsync'd pages names their file") {
  EngineRig rig(write_back_options());
  const std::uint32_t P = rig.page_size();
  rig.put("journal", pattern(1, 4 * P));
  rig.put("other", pattern(2, 2 * P));
  CHECK(rig.read_through("other", 0, 2 * P) == pattern(2, 2 * P));
  auto file = rig.engine().open_file("journal");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, 0, pattern(3, 2 * P)).is_ok());
  REQUIRE(rig.engine().fsync(*file).is_ok());  // durable in the cache only
  rig.damage_metadata_page(0);                 // it describes the first slots, the journal's among them
  REQUIRE(rig.power_cycle().is_ok());

  const auto restart = rig.engine().stats().restart;
  CHECK(restart.files_with_losses == 1);
  REQUIRE(restart.losses.size() == 1);
  CHECK(restart.losses.front().find("journal") == 0);
  CHECK(restart.losses.front().find("damaged metadata pages") != std::string::npos);
  // Nothing of the lost pages is served: the file reads as its backing file holds it.
  CHECK(rig.read_through("journal", 0, 4 * P) == rig.get("journal"));

  // The mark went with the restart: the next one says nothing more.
  REQUIRE(rig.restart().is_ok());
  CHECK(rig.engine().stats().restart.files_with_losses == 0);
}

TEST_CASE("loss report: a write-back that finishes clears the mark, and a later cut names nothing") {
  EngineRig rig(write_back_options());
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 2 * P));
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, 0, pattern(2, P)).is_ok());
  REQUIRE(rig.engine().fsync(*file).is_ok());
  REQUIRE(rig.engine().write_back(*file).is_ok());  // close(2): the data is back
  rig.damage_metadata_page(0);
  REQUIRE(rig.power_cycle().is_ok());
  CHECK(rig.engine().stats().restart.files_with_losses == 0);
  CHECK(rig.get("f") == [&] {
    auto expected = pattern(1, 2 * P);
    const auto written = pattern(2, P);
    std::copy(written.begin(), written.end(), expected.begin());
    return expected;
  }());
}

TEST_CASE("loss report: a damaged dirty page found by a read fails the next fsync and close, once") {
  EngineRig rig(write_back_options());
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 3 * P));
  auto file = rig.engine().open_file("f");
  REQUIRE(file.is_ok());
  REQUIRE(rig.engine().write(*file, 0, pattern(2, 3 * P)).is_ok());  // pages 0..2 dirty, in slots 0..2
  rig.damage_slot(1);
  std::vector<std::uint8_t> bytes(3 * P);
  CHECK(rig.engine().read(*file, 0, bytes).status().code() == StatusCode::corruption);
  CHECK(rig.engine().fsync(*file).code() == StatusCode::corruption);
  CHECK(rig.engine().fsync(*file).is_ok());  // reported once
  // The same through a close: write, damage, read, and the close (write_back) says it.
  REQUIRE(rig.engine().write(*file, 0, pattern(3, P)).is_ok());
  rig.damage_slot(0);
  CHECK_FALSE(rig.engine().read(*file, 0, bytes).is_ok());
  CHECK(rig.engine().write_back(*file).code() == StatusCode::corruption);
  CHECK(rig.engine().write_back(*file).is_ok());
  REQUIRE(rig.engine().release(*file).is_ok());
}
