// mkfs.flashdir, and the command lines of mkfs and fsck, run as the real binaries.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "flashdir/cache_dir.h"
#include "flashdir/cache_lock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/size.h"
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

TEST_CASE("mkfs and fsck say their version with -V, as e2fsprogs do", "[tools]") {
  for (const auto& [run, name] : {std::pair{&mkfs, "mkfs.flashdir "}, std::pair{&fsck, "fsck.flashdir "}}) {
    for (const char* flag : {"-V", "--version"}) {
      const auto said = (*run)(flag);
      INFO(said.output);
      CHECK(said.exit_code == 0);
      CHECK_THAT(said.output, Catch::StartsWith(name));
    }
  }
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

TEST_CASE("mkfs gives a cache device RAM scaled with its size unless told, from 4M to 64M", "[tools]") {
  TempDir tmp;
  struct Case {
    std::string args;
    std::uint64_t ram;
  };
  for (const Case& c : {Case{"--size 32M", 4ULL << 20}, Case{"--size 256M --sparse", 16ULL << 20},
                        Case{"--size 4G --sparse", 64ULL << 20}, Case{"--size 32M --ram 8M", 8ULL << 20}}) {
    const auto dir = tmp / "c";
    const auto made = mkfs(quoted(dir) + " --force " + c.args);
    INFO(c.args << ": " << made.output);
    REQUIRE(made.exit_code == 0);
    CHECK(read_superblock_file(CacheDirPaths(dir).superblock)->superblock.ram_budget_bytes == c.ram);
  }
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
      {dir + " --size 16M --op 7", "--op 7% leaves garbage collection too little room on 32 blocks of 512 KiB"},
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

TEST_CASE("a small cache gets the over-provisioning its GC needs, a large one the default", "[tools]") {
  // A 16 MiB chip at the default 7% stopped under fio: GC could not free the blocks a write
  // asked for (doc/ftl.md "Layout").
  TempDir tmp;
  struct Case {
    std::uint64_t capacity;
    bool raised;
  };
  for (const Case c : {Case{16 << 20, true}, Case{32 << 20, true}, Case{256 << 20, false}}) {
    FormatOptions options;
    options.capacity_bytes = c.capacity;
    options.force = true;
    INFO(format_size(c.capacity));
    REQUIRE(format_cache_dir(tmp / "cache", options).is_ok());
    const auto sb = read_superblock_file(CacheDirPaths(tmp / "cache").superblock)->superblock;
    const std::uint16_t minimum = Ftl::minimum_overprovision_permille(sb.geometry).value();
    CHECK(sb.overprovision_permille == std::max(kDefaultOverprovisionPermille, minimum));
    CHECK((minimum > kDefaultOverprovisionPermille) == c.raised);
    // The minimum is accepted when asked for, and a tenth of a percent less is not.
    options.overprovision_permille = minimum;
    CHECK(format_cache_dir(tmp / "cache", options).is_ok());
    options.overprovision_permille = static_cast<std::uint16_t>(minimum - 1);
    CHECK_FALSE(format_cache_dir(tmp / "cache", options).is_ok());
  }
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
  std::filesystem::permissions(dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  // Permission bits do not stop root, so as root run mkfs as nobody, in a directory of nobody's.
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=nobody --regid=nogroup --clear-groups " : "";
  if (::geteuid() == 0) REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
  const auto result = run_command(as_user + tool_path("MKFS_FLASHDIR") + " " + quoted(dir) + " --size 16M");
  INFO(result.output);
  CHECK(result.exit_code != 0);
  CHECK_THAT(result.output, Catch::Contains("readonly/daemon.lock: Permission denied"));
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

TEST_CASE("mkfs refuses a non-empty directory that is not a cache, --force too", "[tools]") {
  TempDir tmp;
  std::ofstream(tmp / "precious.txt") << "keep me";
  // A user's own catalog/ tree looks like part of a cache: --force replaces only a cache.
  std::filesystem::create_directories(tmp / "mine/catalog/2024");
  std::ofstream(tmp / "mine/catalog/2024/photos.txt") << "keep me too";
  for (const auto& [dir, args] : {std::pair{tmp.path(), ""}, std::pair{tmp.path(), " --force"},
                                  std::pair{tmp / "mine", " --force"}}) {
    const auto result = mkfs(quoted(dir) + " --size 16M" + args);
    INFO(result.output);
    CHECK(result.exit_code != 0);
    CHECK_THAT(result.output, Catch::Contains("is neither a flashdir cache nor empty") &&
                                  Catch::Contains("--force replaces only a flashdir cache"));
    CHECK(std::count(result.output.begin(), result.output.end(), '\n') == 1);
  }
  CHECK(std::filesystem::exists(tmp / "precious.txt"));
  CHECK(std::filesystem::exists(tmp / "mine/catalog/2024/photos.txt"));
  CHECK_FALSE(std::filesystem::exists(tmp / "daemon.lock"));
  CHECK_FALSE(std::filesystem::exists(tmp / "mine/daemon.lock"));
  // What an interrupted first mount leaves (the lock, part of a cache, no superblock) is replaced.
  std::filesystem::create_directories(tmp / "partial/catalog");
  std::ofstream(tmp / "partial/daemon.lock") << "1";
  CHECK_THAT(mkfs(quoted(tmp / "partial") + " --size 16M").output, Catch::Contains("holds part of a flashdir cache"));
  CHECK(mkfs(quoted(tmp / "partial") + " --size 16M --force").exit_code == 0);
}

TEST_CASE("mkfs leaves everything it makes private at once, whatever the umask", "[tools]") {
  TempDir tmp;
  const auto made = run_command("umask 000 && " + tool_path("MKFS_FLASHDIR") + " " + quoted(tmp / "cache") + " --size 16M");
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  const CacheDirPaths paths(tmp / "cache");
  const auto mode = [](const std::filesystem::path& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  CHECK(mode(paths.dir) == 0700);
  CHECK(mode(paths.catalog) == 0700);
  CHECK(mode(paths.superblock) == 0600);
  CHECK(mode(paths.image) == 0600);
  CHECK(mode(paths.dir / kLockFileName) == 0600);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(paths.catalog)) {
    INFO(entry.path());
    CHECK((mode(entry.path()) & 077) == 0);
  }
}

TEST_CASE("mkfs refuses a cache directory another user could change", "[tools]") {
  TempDir tmp;
  std::filesystem::create_directory(tmp / "open");
  std::filesystem::permissions(tmp / "open", std::filesystem::perms::all);
  const auto open = mkfs(quoted(tmp / "open") + " --size 16M");
  CHECK(open.exit_code != 0);
  CHECK_THAT(open.output, Catch::Contains("is writable by group or others (mode 0777)"));
  const auto below = mkfs(quoted(tmp / "open/cache") + " --size 16M");
  CHECK_THAT(below.output, Catch::Contains("who could replace the cache directory"));
  CHECK(std::filesystem::is_empty(tmp / "open"));
  if (::geteuid() != 0) return;
  std::filesystem::create_directory(tmp / "theirs");
  REQUIRE(::chown((tmp / "theirs").c_str(), 4321, 4321) == 0);
  const auto theirs = mkfs(quoted(tmp / "theirs") + " --size 16M --force");
  CHECK(theirs.exit_code != 0);
  CHECK_THAT(theirs.output, Catch::Contains("is owned by user 4321"));
  CHECK(std::filesystem::is_empty(tmp / "theirs"));
}

TEST_CASE("mkfs --force refuses a cache in use, by the daemon's lock", "[tools]") {
  TempDir tmp;
  const auto dir = tmp / "cache";
  REQUIRE(mkfs(quoted(dir) + " --size 16M").exit_code == 0);
  const auto uuid = read_superblock_file(CacheDirPaths(dir).superblock)->superblock.uuid;
  auto trusted = open_trusted_dir(dir, TrustPolicy::enforce, CreateDirs::none);
  REQUIRE(trusted.is_ok());
  LockRequest daemon;
  daemon.program = kDaemonProgram;
  daemon.state = "serving /mnt/fast";
  auto lock = lock_cache_dir(*trusted, daemon);
  REQUIRE(lock.is_ok());
  const auto refused = mkfs(quoted(dir) + " --size 16M --force");
  INFO(refused.output);
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.output, Catch::Contains("is in use by another flashdir daemon (pid " + std::to_string(::getpid()) +
                                             ", serving /mnt/fast); unmount it first"));
  CHECK(read_superblock_file(CacheDirPaths(dir).superblock)->superblock.uuid == uuid);
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
