// fsck.flashdir over the FTL: damaged superblocks, images, checkpoints, pages and mappings; what
// -n reports and what -y repairs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "flashdir/cache_dir.h"
#include "flashdir/cache_lock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/faulty_chip.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_chip.h"
#include "tools/cache_chip.h"

using namespace flashdir;
using namespace flashdir::testing;

TEST_CASE("fsck finds a flipped byte in the superblock", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  const auto superblock = CacheDirPaths(dir).superblock;

  SECTION("in one slot: an uncorrected error, repaired by -y") {
    flip_byte(superblock, 60);
    const auto checked = fsck("-n " + quoted(dir));
    INFO(checked.output);
    CHECK(checked.exit_code == 4);
    CHECK_THAT(checked.output, Catch::Contains("superblock slot 0") && Catch::Contains("checksum mismatch"));
    const auto repaired = fsck("-y " + quoted(dir));
    INFO(repaired.output);
    CHECK(repaired.exit_code == 1);
    CHECK(fsck(quoted(dir)).exit_code == 0);
  }
  SECTION("in one slot: fsck(8)'s -p and -a repair as -y does; -f changes nothing") {
    flip_byte(superblock, 60);
    CHECK(fsck("-f -n " + quoted(dir)).exit_code == 4);
    const auto preened = fsck("-p " + quoted(dir));
    INFO(preened.output);
    CHECK(preened.exit_code == 1);
    CHECK(fsck(quoted(dir)).exit_code == 0);
    flip_byte(superblock, 60);
    CHECK(fsck("-a -f " + quoted(dir)).exit_code == 1);
    CHECK(fsck("-f " + quoted(dir)).exit_code == 0);
  }
  SECTION("in both slots: an error -y repairs from the catalog's copy") {
    flip_byte(superblock, 60);
    flip_byte(superblock, format::kSuperblockSlotSize + 60);
    const auto checked = fsck(quoted(dir));
    INFO(checked.output);
    CHECK(checked.exit_code == 4);
    CHECK_THAT(checked.output, Catch::Contains("no valid superblock") &&
                                   Catch::Contains("fsck -y rebuilds it from the catalog's copy"));
  }
  SECTION("in both slots, with the catalog and the image header gone too: the cache cannot be used") {
    flip_byte(superblock, 60);
    flip_byte(superblock, format::kSuperblockSlotSize + 60);
    flip_byte(CacheDirPaths(dir).image, 30);
    std::filesystem::remove_all(CacheDirPaths(dir).catalog);
    for (const char* mode : {"-n ", "-y "}) {
      const auto checked = fsck(mode + quoted(dir));
      INFO(checked.output);
      CHECK(checked.exit_code == 8);
      CHECK_THAT(checked.output, Catch::Contains("no valid superblock") && Catch::Contains("nothing is left to rebuild") &&
                                     Catch::Contains("mkfs.flashdir --force"));
    }
  }
}

TEST_CASE("fsck reports operational errors with exit 8", "[tools]") {
  TempDir tmp;
  const auto missing = fsck(quoted(tmp / "nothing-here"));
  CHECK(missing.exit_code == 8);
  REQUIRE(mkfs(quoted(tmp / "a") + " --size 16M").exit_code == 0);
  REQUIRE(mkfs(quoted(tmp / "b") + " --size 16M").exit_code == 0);
  std::filesystem::copy_file(tmp / "b" / "nand.img", tmp / "a" / "nand.img",
                             std::filesystem::copy_options::overwrite_existing);
  const auto swapped = fsck(quoted(tmp / "a"));
  INFO(swapped.output);
  CHECK(swapped.exit_code == 8);
  CHECK_THAT(swapped.output, Catch::Contains("belongs to cache"));
  // A truncated image is an error -y repairs (fsck_repair_test.cc).
  std::filesystem::resize_file(tmp / "b" / "nand.img", 4096 * 3);
  const auto truncated = fsck(quoted(tmp / "b"));
  INFO(truncated.output);
  CHECK(truncated.exit_code == 4);
  CHECK_THAT(truncated.output, Catch::Contains("needs") && Catch::Contains("fsck -y extends it"));
  CHECK_THAT(fsck("''").output, Catch::Contains("the cache directory path is empty"));
  // A backing directory named on the command line must be there.
  std::ofstream(tmp / "plain") << "a file";
  for (const auto& [backing, why] : {std::pair{tmp / "no-backing", "does not exist"}, std::pair{tmp / "plain", "is not a directory"}}) {
    const auto checked = fsck("-n --backing " + quoted(backing) + " " + quoted(tmp / "a"));
    INFO(checked.output);
    CHECK(checked.exit_code == 8);
    CHECK_THAT(checked.output, Catch::Contains("the backing directory " + backing.string() + " " + why));
  }
}

TEST_CASE("fsck repairs only a cache directory it trusts, and reports one it does not", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  const auto repaired = fsck("-y " + quoted(dir));
  INFO(repaired.output);
  CHECK(repaired.exit_code == 8);
  CHECK_THAT(repaired.output, Catch::Contains("is writable by group or others (mode 0777)") &&
                                  Catch::Contains("fsck -n checks it without changing anything"));
  const auto checked = fsck("-n " + quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
  CHECK_THAT(checked.output, Catch::Contains("note: cache directory") && Catch::Contains("is writable by group or others"));
  CHECK((std::filesystem::status(dir).permissions() & std::filesystem::perms::all) == std::filesystem::perms::all);
}

TEST_CASE("fsck refuses a cache in use, by the daemon's lock", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  auto trusted = open_trusted_dir(dir, TrustPolicy::enforce, CreateDirs::none);
  REQUIRE(trusted.is_ok());
  LockRequest daemon;
  daemon.program = kDaemonProgram;
  daemon.state = "starting";
  auto lock = lock_cache_dir(*trusted, daemon);
  REQUIRE(lock.is_ok());
  for (const char* mode : {"-n ", "-y "}) {
    const auto checked = fsck(mode + quoted(dir));
    INFO(checked.output);
    CHECK(checked.exit_code == 8);
    CHECK_THAT(checked.output, Catch::Contains("is in use by another flashdir daemon (pid " + std::to_string(::getpid())));
  }
}

TEST_CASE("fsck refuses an image whose geometry differs from the superblock's", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  const CacheDirPaths paths(dir);
  format::Superblock sb = read_superblock_file(paths.superblock)->superblock;
  sb.geometry.block_count *= 2;  // same cache, another chip
  REQUIRE(write_superblock_file(paths.superblock, sb).is_ok());
  const auto checked = fsck(quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == (8 | 4));  // the catalog's copy of the superblock disagrees too
  CHECK_THAT(checked.output, Catch::Contains("image geometry (16 MiB: 32 blocks") &&
                                 Catch::Contains("differs from the superblock's (32 MiB: 64 blocks"));
}

TEST_CASE("fsck finds a cache consistent after a power cut", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  write_through_ftl(dir, 1000000, 3000);
  const auto checked = fsck("-n " + quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
  CHECK_THAT(checked.output, Catch::Contains("1 damaged") && Catch::Contains("changed since") &&
                                 Catch::Contains("0 mismatches") && Catch::Contains("note: torn page"));
}

TEST_CASE("fsck: after a clean shutdown a damaged checkpoint page is an error", "[tools][damage]") {
  // A fresh cache holds two checkpoints, each the only page of its block: where a torn page
  // could sit, were the shutdown not clean.
  for (int which = 0; which < 2; ++which) {
    TempDir tmp;
    const auto dir = tmp / "cache";
    REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
    std::vector<std::uint64_t> checkpoint_pages;
    for (const auto& [page, record] : records_of(dir)) {
      if (record.kind == format::PageKind::checkpoint) checkpoint_pages.push_back(page);
    }
    REQUIRE(checkpoint_pages.size() == 2);
    const std::uint64_t page = checkpoint_pages[static_cast<std::size_t>(which)];
    damage_record(dir, page);
    const auto checked = fsck("-n " + quoted(dir));
    INFO(checked.output);
    CHECK(checked.exit_code == 4);
    CHECK_THAT(checked.output,
               Catch::Contains(fmt::format("error: damaged page {} ", page)) && Catch::Contains("shut down cleanly"));
    // Issue 8, item 6: -y used to leave the damaged checkpoint in place and exit 4 every time;
    // it writes fresh checkpoints over both slots.
    const auto repaired = fsck("-y " + quoted(dir));
    INFO(repaired.output);
    CHECK(repaired.exit_code == 1);
    CHECK_THAT(repaired.output, Catch::Contains("fresh checkpoints"));
    const auto again = fsck("-n " + quoted(dir));
    INFO(again.output);
    CHECK(again.exit_code == 0);
  }
}

TEST_CASE("fsck: a damaged page inside a block is an error, after a power cut or not", "[tools][damage]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  const bool power_cut = GENERATE(false, true);
  INFO((power_cut ? "after a power cut" : "after a clean shutdown"));
  if (power_cut) {
    write_through_ftl(dir, 1000000, 3000);
  } else {
    write_through_ftl(dir, 500, FaultPlan::kNever);
  }
  const std::uint64_t page = stale_page_inside_a_block(dir);
  damage_record(dir, page);
  const auto checked = fsck("-n " + quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 4);
  CHECK_THAT(checked.output, Catch::Contains(fmt::format("error: damaged page {} ", page)) &&
                                 Catch::Contains("pages with whole records follow it in its block"));
  // -y collects the block and erases the page; nothing referred to it, so nothing is lost.
  const auto repaired = fsck("-y " + quoted(dir));
  INFO(repaired.output);
  CHECK(repaired.exit_code == 1);
  const auto again = fsck("-n " + quoted(dir));
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.output, Catch::Contains("0 lost") && Catch::Contains("0 damaged"));
}

TEST_CASE("fsck: after a power cut, one interrupted erase is a note and a second an error", "[tools][damage]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  write_through_ftl(dir, 1000000, 3000);
  const auto erased = erased_blocks(dir);
  REQUIRE(erased.size() >= 2);

  interrupt_erase(dir, erased[0]);
  const auto one = fsck("-n " + quoted(dir));
  INFO(one.output);
  CHECK(one.exit_code == 0);
  CHECK_THAT(one.output, Catch::Contains(fmt::format("note: block {}: all", erased[0].value)) &&
                             Catch::Contains("as an interrupted erase leaves them"));

  interrupt_erase(dir, erased[1]);
  const auto two = fsck("-n " + quoted(dir));
  INFO(two.output);
  CHECK(two.exit_code == 4);
  CHECK_THAT(two.output, Catch::Contains("a second block with every programmed page damaged"));
}

TEST_CASE("fsck: a torn page that a recovered power cut left is a note after a clean shutdown", "[tools][damage]") {
  // Recovery closes the block of a torn page as it is, and GC erases it later; until then a
  // clean cache holds it.
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  write_through_ftl(dir, 1000000, 3000);
  recover_and_close(dir);
  const auto checked = fsck("-n " + quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
  CHECK_THAT(checked.output,
             Catch::Contains("1 damaged") && Catch::Contains("(clean)") && Catch::Contains("note: torn page"));
}

TEST_CASE("fsck rebuilds a mapping whose translation page is damaged", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  write_through_ftl(dir, 500, FaultPlan::kNever);
  // Flip a byte of the newest copy of translation page 0, found by its OOB records: the one
  // the clean checkpoint refers to.
  std::uint64_t ppn = 0xFFFFFFFFu;
  std::uint64_t newest = 0;
  for (const auto& [page, record] : records_of(dir)) {
    if (record.kind == format::PageKind::translation && record.logical_number == 0 && record.sequence >= newest) {
      newest = record.sequence;
      ppn = page;
    }
  }
  REQUIRE(ppn != 0xFFFFFFFFu);
  const Geometry g = read_superblock_file(CacheDirPaths(dir).superblock)->superblock.geometry;
  flip_byte(CacheDirPaths(dir).image, format::image_layout(g).data_offset + ppn * g.page_size_bytes + 100);

  const auto checked = fsck("-n " + quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 4);
  CHECK_THAT(checked.output, Catch::Contains("translation page 0"));
  // The rebuilt mapping no longer needs the page, and its block is collected and erased.
  const auto repaired = fsck("-y " + quoted(dir));
  INFO(repaired.output);
  CHECK(repaired.exit_code == 1);
  CHECK_THAT(repaired.output, Catch::Contains("rebuilt the FTL mapping"));
  const auto again = fsck("-n " + quoted(dir));
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.output, Catch::Contains("0 damaged") && Catch::Contains("0 mismatches"));
}

TEST_CASE("fsck -y loses a damaged data page's LPN, lists it, and leaves a chip that fsck -n finds clean", "[tools]") {
  // Issue 8, item 3: -y rebuilt a mapping that still pointed at the damaged page, and every
  // later fsck -n failed the same way.
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  write_through_ftl(dir, 500, FaultPlan::kNever);
  // The page that holds the newest version of some LPN: live data.
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> newest;  // LPN -> (sequence, page)
  for (const auto& [page, record] : records_of(dir)) {
    if (record.kind != format::PageKind::data) continue;
    auto& held = newest[record.logical_number];
    if (record.sequence >= held.first) held = {record.sequence, page};
  }
  REQUIRE_FALSE(newest.empty());
  const std::uint64_t lpn = newest.begin()->first;
  const std::uint64_t ppn = newest.begin()->second.second;
  const Geometry g = read_superblock_file(CacheDirPaths(dir).superblock)->superblock.geometry;
  flip_byte(CacheDirPaths(dir).image, format::image_layout(g).data_offset + ppn * g.page_size_bytes + 100);

  const auto checked = fsck("-n " + quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 4);
  CHECK_THAT(checked.output, Catch::Contains(fmt::format("LPN {} maps to page {}, which does not hold it", lpn, ppn)));
  const auto repaired = fsck("-y " + quoted(dir));
  INFO(repaired.output);
  CHECK(repaired.exit_code == 1);
  CHECK_THAT(repaired.output, Catch::Contains(fmt::format("note: LPN {} is lost", lpn)));
  const auto again = fsck("-n " + quoted(dir));
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.output, Catch::Contains("1 lost") && Catch::Contains("0 damaged") &&
                               Catch::Contains(fmt::format("note: LPN {} is lost", lpn)));
  // The FTL agrees: the LPN reads as an error, and the cache above is told.
  CacheChip cache(dir, ImageAccess::read_write);
  auto ftl = Ftl::open(cache.chip, cache.clock, options_of(dir, kSmallRamBytes));
  REQUIRE(ftl.is_ok());
  REQUIRE((*ftl)->lost_lpns().size() == 1);
  CHECK((*ftl)->lost_lpns()[0].value == lpn);
  std::vector<std::uint8_t> page(g.page_size_bytes);
  CHECK((*ftl)->read(Lpn(lpn), 1, page).code() == StatusCode::corruption);
}

TEST_CASE("a superblock whose over-provisioning differs from the checkpoint's is refused, never rebuilt", "[tools]") {
  // Issue 8, item 4: fsck laid the FTL out from the superblock, the FTL from its checkpoint;
  // -n overflowed a buffer and -y rebuilt with fewer logical pages, dropping data.
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M --op 20").exit_code == 0);
  write_through_ftl(dir, 500, FaultPlan::kNever);
  const CacheDirPaths paths(dir);
  format::Superblock sb = read_superblock_file(paths.superblock)->superblock;
  sb.overprovision_permille = 300;
  REQUIRE(write_superblock_file(paths.superblock, sb).is_ok());

  for (const char* mode : {"-n", "-y"}) {
    const auto checked = fsck(std::string(mode) + " " + quoted(dir));
    INFO(mode << ": " << checked.output);
    CHECK(checked.exit_code == 4);
    CHECK_THAT(checked.output, Catch::Contains("over-provisioning differs") && Catch::Contains("200 per mille") &&
                                   Catch::Contains("the superblock records 300 per mille"));
    CHECK_THAT(checked.output, !Catch::Contains("rebuilt"));
  }
  CacheChip cache(dir, ImageAccess::read_write);
  const auto opened = Ftl::open(cache.chip, cache.clock, options_of(dir, kSmallRamBytes));
  REQUIRE_FALSE(opened.is_ok());
  CHECK_THAT(opened.status().message(), Catch::Contains("over-provisioning differs"));
  // With the format's over-provisioning everything is still there.
  FtlOptions right = options_of(dir, kSmallRamBytes);
  right.overprovision_permille = 200;
  const auto reopened = Ftl::open(cache.chip, cache.clock, right);
  INFO(reopened.status().to_string());
  CHECK(reopened.is_ok());
}

TEST_CASE("mkfs --ram 0 makes a cache whose FTL works without device RAM", "[tools]") {
  // FtlOptions accept any budget, so mkfs does too: with none, nothing is buffered and every
  // lookup reads its translation page.
  const std::string policy = GENERATE("tree", "stack", "aps", "static:50");
  INFO("--ram-policy " << policy);
  TempDir tmp;
  const auto dir = tmp / "cache";
  const auto made = mkfs(quoted(dir) + " --size 16M --ram 0 --ram-policy " + policy);
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  CHECK_THAT(made.output, Catch::Contains("0 B device RAM"));
  {
    CacheChip cache(dir, ImageAccess::read_write);
    auto ftl = Ftl::open(cache.chip, cache.clock, options_of(dir, 0));
    REQUIRE(ftl.is_ok());
    const std::size_t page_bytes = cache.chip.geometry().page_size_bytes;
    SeededRandom random(5);
    std::map<std::uint64_t, std::vector<std::uint8_t>> written;
    for (int r = 0; r < 300; ++r) {
      std::vector<std::uint8_t> data(page_bytes);
      for (auto& byte : data) byte = static_cast<std::uint8_t>(random.next_u64());
      const std::uint64_t lpn = random.uniform(500);
      REQUIRE((*ftl)->write(Lpn(lpn), 1, data).is_ok());
      written[lpn] = std::move(data);
    }
    std::vector<std::uint8_t> back(page_bytes);
    for (const auto& [lpn, data] : written) {
      REQUIRE((*ftl)->read(Lpn(lpn), 1, back).is_ok());
      CHECK(back == data);
    }
    REQUIRE((*ftl)->close().is_ok());
  }
  const auto checked = fsck("-n " + quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
}

TEST_CASE("fsck draws a progress bar on a terminal for a large image", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 4G").exit_code == 0);  // 8192 blocks, sparse
  // script(1) gives fsck a pseudo-terminal; through a pipe it must draw nothing.
  const auto on_tty = run_command("script -qec \"" + tool_path("FSCK_FLASHDIR") + " " + quoted(dir) + "\" /dev/null");
  INFO(on_tty.output);
  CHECK(on_tty.exit_code == 0);
  CHECK_THAT(on_tty.output, Catch::Contains("scanning chip") && Catch::Contains("100%"));
  const auto piped = fsck(quoted(dir));
  CHECK_THAT(piped.output, !Catch::Contains("scanning chip"));
}
