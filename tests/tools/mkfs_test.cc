// mkfs.flashdir, and the command lines of mkfs and fsck, run as the real binaries.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "flashdir/cache_dir.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

using namespace flashdir;
using namespace flashdir::testing;

TEST_CASE("mkfs formats a cache that fsck finds clean", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  const auto made = mkfs(quoted(dir) + " --size 64M");
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  CHECK_THAT(made.output, Catch::Contains("128 blocks x 128 pages x 4096 B"));
  const CacheDirPaths paths(dir);
  CHECK(std::filesystem::exists(paths.superblock));
  CHECK(std::filesystem::exists(paths.image));
  CHECK(std::filesystem::is_directory(paths.catalog));
  const auto checked = fsck(quoted(dir));
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
  CHECK_THAT(checked.output, Catch::Contains("clean"));
}

TEST_CASE("mkfs takes the geometry options", "[tools]") {
  TempDir tmp;
  const auto made =
      mkfs(quoted(tmp / "c") + " --size 32M --page-size 2K --pages-per-block 64 --oob-size 128 --latency mlc");
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  CHECK_THAT(made.output, Catch::Contains("256 blocks x 64 pages x 2048 B (+128 B OOB)"));
  CHECK_THAT(made.output, Catch::Contains("mlc"));
  CHECK(read_superblock_file(CacheDirPaths(tmp / "c").superblock)->superblock.geometry.oob_size_bytes == 128);
}

TEST_CASE("mkfs refuses bad requests with a one-line reason", "[tools]") {
  TempDir tmp;
  const auto dir = quoted(tmp / "cache");
  struct Case {
    std::string args;
    std::string reason;
  };
  std::ofstream(tmp / "plain-file") << "not a directory";
  const Case cases[] = {
      {dir + " --size 1M", "--size 1 MiB holds 2 blocks"},
      {dir + " --size 1M", "at least 32 blocks"},
      {dir + " --size 0", "--size 0 B holds 0 blocks"},
      {dir + " --size 16388K", "--size 16781312 B is not a whole number"},
      {dir + " --size 16M --pages-per-block 3", "(--pages-per-block 3 x --page-size 4 KiB)"},
      {dir + " --size 16M --pages-per-block 1", "--pages-per-block: pages per block 1 is outside [2, 65536]"},
      {dir + " --size 64M --page-size 3000", "--page-size: page size 3000"},
      {dir + " --size 64M --page-size 0", "--page-size: page size 0"},
      {dir + " --size 64M --oob-size 16", "--oob-size: OOB size 16"},
      {dir + " --size 64M --oob-size 5000", "[48, 4096]"},
      {dir + " --size 64X", "--size: size '64X' has an unknown unit"},
      {dir + " --size 64M --latency tlc", "tlc"},
      {dir + " --size 64M --op 99.9", "--op 99.9% is outside the accepted 0 to 50%"},
      {dir + " --size 64M --op -1", "--op -1%"},
      {dir + " --size 64T --page-size 512 --pages-per-block 2", "--size: a chip of"},
      {"'' --size 64M", "the cache directory path is empty"},
      {quoted(tmp / "plain-file") + " --size 64M", "plain-file exists and is not a directory"},
      {"/proc/flashdir-cache --size 64M", "/proc/flashdir-cache"},
      {quoted(tmp / "missing-parent" / "cache") + " --size 64M", "cannot create"},
  };
  for (const auto& c : cases) {
    const auto result = mkfs(c.args);
    INFO(c.args << "\n" << result.output);
    CHECK(result.exit_code != 0);
    CHECK_THAT(result.output, Catch::Contains(c.reason));
    CHECK(std::count(result.output.begin(), result.output.end(), '\n') == 1);
  }
  CHECK_FALSE(std::filesystem::exists(tmp / "cache" / "superblock"));
}

TEST_CASE("format_cache_dir holds every caller to the over-provisioning limit, not only mkfs", "[tools]") {
  TempDir tmp;
  FormatOptions options;
  options.capacity_bytes = 16 << 20;
  options.overprovision_permille = kMaxOverprovisionPermille + 1;
  const auto refused = format_cache_dir(tmp / "cache", options);
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("--op 50.1% is above the maximum of 50%"));
  options.overprovision_permille = kMaxOverprovisionPermille;
  CHECK(format_cache_dir(tmp / "cache", options).is_ok());
}

TEST_CASE("mkfs refuses an unwritable directory", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "readonly";
  std::filesystem::create_directory(dir);
  std::filesystem::permissions(tmp.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                               std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_read |
                                               std::filesystem::perms::others_exec);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                                        std::filesystem::perms::others_read | std::filesystem::perms::others_exec);
  // Permission bits do not stop root, so as root run mkfs as nobody.
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=nobody --regid=nogroup --clear-groups " : "";
  const auto result = run_command(as_user + tool_path("MKFS_FLASHDIR") + " " + quoted(dir) + " --size 16M");
  INFO(result.output);
  CHECK(result.exit_code != 0);
  CHECK_THAT(result.output, Catch::Contains("is not writable") && Catch::Contains("Permission denied"));
}

TEST_CASE("mkfs keeps an existing cache unless forced", "[tools]") {
  TempDir tmp;
  const auto dir = quoted(tmp / "cache");
  REQUIRE(mkfs(dir + " --size 16M").exit_code == 0);
  const auto first = read_superblock_file(CacheDirPaths(tmp / "cache").superblock)->superblock.uuid;
  const auto again = mkfs(dir + " --size 16M");
  CHECK(again.exit_code != 0);
  CHECK_THAT(again.output, Catch::Contains("already holds a flashdir cache"));
  CHECK(read_superblock_file(CacheDirPaths(tmp / "cache").superblock)->superblock.uuid == first);
  REQUIRE(mkfs(dir + " --size 16M --force").exit_code == 0);
  CHECK(read_superblock_file(CacheDirPaths(tmp / "cache").superblock)->superblock.uuid != first);
}

TEST_CASE("mkfs refuses a non-empty directory that is not a cache", "[tools]") {
  TempDir tmp;
  std::ofstream(tmp / "precious.txt") << "keep me";
  const auto result = mkfs(quoted(tmp.path()) + " --size 16M");
  CHECK(result.exit_code != 0);
  CHECK_THAT(result.output, Catch::Contains("not empty"));
  REQUIRE(mkfs(quoted(tmp.path()) + " --size 16M --force").exit_code == 0);
  CHECK(std::filesystem::exists(tmp / "precious.txt"));
}

TEST_CASE("mkfs and fsck explain their options", "[tools]") {
  const auto mkfs_help = mkfs("--help");
  CHECK(mkfs_help.exit_code == 0);
  for (const char* word : {"--size", "--page-size", "--pages-per-block", "--oob-size", "--latency", "--force", "bytes",
                           "4K", "slc", "48 to 4096", "2 to 65536", "512 B to 64 KiB", "0 to 50"}) {
    CHECK_THAT(mkfs_help.output, Catch::Contains(word));
  }
  // Every size option (--size, --page-size, --oob-size, --ram) names every suffix.
  std::size_t suffix_lists = 0;
  for (std::size_t at = 0; (at = mkfs_help.output.find("K, M, G or T", at)) != std::string::npos; ++at) ++suffix_lists;
  CHECK(suffix_lists == 4);
  const auto fsck_help = fsck("--help");
  CHECK(fsck_help.exit_code == 0);
  CHECK_THAT(fsck_help.output, Catch::Contains("-n") && Catch::Contains("-y") && Catch::Contains("Exit status") &&
                                   Catch::Contains("16 usage or syntax error"));
}

TEST_CASE("a command-line syntax error is one line with a hint and a usage exit code", "[tools]") {
  TempDir tmp;
  const auto dir = quoted(tmp / "cache");
  struct Case {
    CommandResult result;
    int exit_code;
    std::string prefix;
    std::string what;
  };
  const Case cases[] = {
      {mkfs(dir + " --size 16M --bogus"), 1, "mkfs.flashdir: ", "--bogus"},
      {mkfs(dir + " --size 16M --pages-per-block many"), 1, "mkfs.flashdir: ", "--pages-per-block"},
      {mkfs("--size 16M"), 1, "mkfs.flashdir: ", "DIR is required"},
      {fsck(dir + " --bogus"), 16, "fsck.flashdir: ", "--bogus"},
      {fsck("-n -y " + dir), 16, "fsck.flashdir: ", "excludes"},
      {fsck(""), 16, "fsck.flashdir: ", "DIR is required"},
  };
  for (const auto& c : cases) {
    INFO(c.result.output);
    CHECK(c.result.exit_code == c.exit_code);
    CHECK_THAT(c.result.output, Catch::StartsWith(c.prefix) && Catch::Contains(c.what) && Catch::Contains("--help"));
    CHECK(std::count(c.result.output.begin(), c.result.output.end(), '\n') == 1);
  }
  CHECK_FALSE(std::filesystem::exists(tmp / "cache"));
}
