// Where a mount's cache lives: created 0700 on first use, one daemon at a time, bound to its
// backing directory, never a directory that holds something else, another user could change,
// or the mount could reach; a start that fails leaves nothing behind it made.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "fs/cache_location.h"
#include "support/temp_dir.h"

using namespace flashdir;
using namespace flashdir::fs;
using flashdir::testing::TempDir;

namespace {

MountOptions with_cache(const std::filesystem::path& dir) {
  MountOptions options;
  options.cache_dir = dir;
  options.new_cache_bytes = 32ULL << 20;
  return options;
}

}  // namespace

TEST_CASE("a missing cache is created private, formatted with size=, and locked") {
  TempDir temp;
  auto taken = take_cache(with_cache(temp / "new/cache"), "/srv/data");
  INFO(taken.status().message());
  REQUIRE(taken.is_ok());
  CHECK(taken->created);
  CHECK(taken->lock.held());
  CHECK(taken->superblock.geometry.page_size_bytes * taken->superblock.geometry.pages_per_block *
            taken->superblock.geometry.block_count == (32ULL << 20));
  struct stat st {};
  REQUIRE(::stat((temp / "new/cache").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat((temp / "new").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  SECTION("a second taker is refused, naming the holder") {
    auto second = take_cache(with_cache(temp / "new/cache"), "/srv/data");
    REQUIRE_FALSE(second.is_ok());
    CHECK(second.status().message().find("in use by another flashdir daemon (pid " + std::to_string(::getpid())) !=
          std::string::npos);
  }
  SECTION("after release the cache is taken again, not reformatted") {
    taken = Status::io_error("released");
    auto again = take_cache(with_cache(temp / "new/cache"), "/srv/data");
    REQUIRE(again.is_ok());
    CHECK_FALSE(again->created);
  }
}

TEST_CASE("a cache directory other users may only read is made 0700") {
  TempDir temp;
  REQUIRE(take_cache(with_cache(temp / "c"), "/b").is_ok());
  REQUIRE(::chmod((temp / "c").c_str(), 0755) == 0);
  REQUIRE(take_cache(with_cache(temp / "c"), "/b").is_ok());
  struct stat st {};
  REQUIRE(::stat((temp / "c").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
}

TEST_CASE("a cache directory other users may write, or another user owns, is refused and left as it is") {
  TempDir temp;
  REQUIRE(take_cache(with_cache(temp / "c"), "/b").is_ok());
  REQUIRE(::chmod((temp / "c").c_str(), 0777) == 0);
  auto writable = take_cache(with_cache(temp / "c"), "/b");
  REQUIRE_FALSE(writable.is_ok());
  CHECK_THAT(writable.status().message(), Catch::Contains("is writable by group or others (mode 0777)"));
  struct stat st {};
  REQUIRE(::stat((temp / "c").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0777);
  if (::geteuid() != 0) return;
  REQUIRE(::chmod((temp / "c").c_str(), 0700) == 0);
  REQUIRE(::chown((temp / "c").c_str(), 4321, 4321) == 0);
  auto theirs = take_cache(with_cache(temp / "c"), "/b");
  REQUIRE_FALSE(theirs.is_ok());
  CHECK_THAT(theirs.status().message(), Catch::Contains("is owned by user 4321, not by user 0"));
}

TEST_CASE("a directory holding other files is not taken as a cache, and keeps no lock file") {
  TempDir temp;
  std::filesystem::create_directory(temp / "c");
  std::ofstream(temp / "c/precious") << "keep me";
  auto taken = take_cache(with_cache(temp / "c"), "/b");
  REQUIRE_FALSE(taken.is_ok());
  CHECK(taken.status().message().find("neither a flashdir cache nor empty") != std::string::npos);
  CHECK(std::filesystem::exists(temp / "c/precious"));
  CHECK_FALSE(std::filesystem::exists(temp / "c/daemon.lock"));
}

TEST_CASE("a size mkfs refuses leaves nothing behind that the start made, and can be retried") {
  TempDir temp;
  for (const std::uint64_t refused : {std::uint64_t{1}, std::uint64_t{12345}, std::uint64_t{99999} << 40}) {
    INFO(refused);
    MountOptions options = with_cache(temp / "new/c");
    options.new_cache_bytes = refused;
    auto taken = take_cache(options, "/b");
    REQUIRE_FALSE(taken.is_ok());
    CHECK_FALSE(std::filesystem::exists(temp / "new"));  // made by the start: removed with its parent
    // A directory that was there stays, without what the start put in it.
    std::filesystem::create_directory(temp / "empty");
    options.cache_dir = temp / "empty";
    REQUIRE_FALSE(take_cache(options, "/b").is_ok());
    CHECK(std::filesystem::is_empty(temp / "empty"));
    std::filesystem::remove(temp / "empty");
  }
  MountOptions options = with_cache(temp / "new/c");
  CHECK(take_cache(options, "/b").is_ok());
}

TEST_CASE("a cache inside the backing directory is refused before anything is made") {
  TempDir temp;
  std::filesystem::create_directory(temp / "b");
  const auto backing = std::filesystem::canonical(temp / "b");
  for (const char* inside : {"b/cache", "b", "b/../b/deep/cache"}) {
    INFO(inside);
    auto taken = take_cache(with_cache(temp / inside), backing);
    REQUIRE_FALSE(taken.is_ok());
    CHECK_THAT(taken.status().message(), Catch::Contains("is inside the backing directory " + backing.string()) &&
                                             Catch::Contains("readable and writable through the mount"));
  }
  CHECK(std::filesystem::is_empty(temp / "b"));
  CHECK(take_cache(with_cache(temp / "b-cache"), backing).is_ok());  // a name that only starts the same
}

TEST_CASE("the default cache is per backing directory under XDG_CACHE_HOME, else ~/.cache; root's under /var/cache") {
  constexpr uid_t kUser = 1000;
  const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = saved_xdg != nullptr ? saved_xdg : "";
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  auto a = default_cache_dir("/srv/data", kUser);
  auto b = default_cache_dir("/srv/other/data", kUser);
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  CHECK(a->parent_path() == "/x/cache/flashdir");
  CHECK(a->filename().string().rfind("data-", 0) == 0);
  CHECK(*a != *b);
  CHECK(*a == default_cache_dir("/srv/data", kUser).value());
  // Root never takes a user's directory from the environment (sudo keeps it).
  auto root = default_cache_dir("/srv/data", 0);
  REQUIRE(root.is_ok());
  CHECK(*root == std::filesystem::path("/var/cache/flashdir") / a->filename());
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", ::getenv("HOME") != nullptr ? ::getenv("HOME") : "/root", 1);
  auto home = default_cache_dir("/srv/data", kUser);
  REQUIRE(home.is_ok());
  CHECK(home->parent_path() == std::filesystem::path(::getenv("HOME")) / ".cache/flashdir");
  if (saved_xdg != nullptr) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}
