// Where a mount's cache lives: created 0700 on first use, one daemon at a time, bound to its
// backing directory, never a directory that holds something else.
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
  CHECK(taken->lock.valid());
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
  SECTION("another backing directory is refused") {
    taken = Status::io_error("released");
    auto other = take_cache(with_cache(temp / "new/cache"), "/srv/other");
    REQUIRE_FALSE(other.is_ok());
    CHECK(other.status().message().find("belongs to backing directory /srv/data") != std::string::npos);
  }
}

TEST_CASE("a loose cache directory is made 0700") {
  TempDir temp;
  REQUIRE(take_cache(with_cache(temp / "c"), "/b").is_ok());
  REQUIRE(::chmod((temp / "c").c_str(), 0755) == 0);
  REQUIRE(take_cache(with_cache(temp / "c"), "/b").is_ok());
  struct stat st {};
  REQUIRE(::stat((temp / "c").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
}

TEST_CASE("a directory holding other files is not taken as a cache") {
  TempDir temp;
  std::filesystem::create_directory(temp / "c");
  std::ofstream(temp / "c/precious") << "keep me";
  auto taken = take_cache(with_cache(temp / "c"), "/b");
  REQUIRE_FALSE(taken.is_ok());
  CHECK(taken.status().message().find("neither a flashdir cache nor empty") != std::string::npos);
  CHECK(std::filesystem::exists(temp / "c/precious"));
}

TEST_CASE("a size mkfs refuses leaves no cache behind and can be retried") {
  TempDir temp;
  MountOptions options = with_cache(temp / "c");
  options.new_cache_bytes = 12345;
  auto taken = take_cache(options, "/b");
  REQUIRE_FALSE(taken.is_ok());
  CHECK_FALSE(std::filesystem::exists(temp / "c/superblock"));
  options.new_cache_bytes = 32ULL << 20;
  CHECK(take_cache(options, "/b").is_ok());
}

TEST_CASE("the default cache is per backing directory under XDG_CACHE_HOME, else ~/.cache") {
  const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = saved_xdg != nullptr ? saved_xdg : "";
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  auto a = default_cache_dir("/srv/data");
  auto b = default_cache_dir("/srv/other/data");
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  CHECK(a->parent_path() == "/x/cache/flashdir");
  CHECK(a->filename().string().rfind("data-", 0) == 0);
  CHECK(*a != *b);
  CHECK(*a == default_cache_dir("/srv/data").value());
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", ::getenv("HOME") != nullptr ? ::getenv("HOME") : "/root", 1);
  auto home = default_cache_dir("/srv/data");
  REQUIRE(home.is_ok());
  CHECK(home->parent_path() == std::filesystem::path(::getenv("HOME")) / ".cache/flashdir");
  if (saved_xdg != nullptr) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}
