// The cache directory's trust check (flashdir/trusted_dir.h), as ssh's StrictModes: directories
// made with other owners and modes in a temporary directory (the tests run as root, so chown
// works; as anyone else the cases that need it are skipped).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "flashdir/cache_dir.h"
#include "flashdir/trusted_dir.h"
#include "support/temp_dir.h"

using namespace flashdir;
using flashdir::testing::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kOtherUser = 4321;

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void make_dir(const fs::path& path, mode_t mode, uid_t owner = ::geteuid()) {
  REQUIRE(::mkdir(path.c_str(), 0700) == 0);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
  if (owner != ::geteuid()) REQUIRE(::chown(path.c_str(), owner, static_cast<gid_t>(-1)) == 0);
}

std::string refusal(const fs::path& dir, CreateDirs create = CreateDirs::none) {
  auto opened = open_trusted_dir(dir, TrustPolicy::enforce, create);
  REQUIRE_FALSE(opened.is_ok());
  return opened.status().message();
}

// Sets the umask for one scope.
class Umask {
 public:
  explicit Umask(mode_t mask) : saved_(::umask(mask)) {}
  ~Umask() { ::umask(saved_); }

 private:
  mode_t saved_;
};

}  // namespace

TEST_CASE("a new cache directory is made 0700 at every level, whatever the umask", "[trust]") {
  TempDir tmp;
  Umask open_umask(0);
  auto opened = open_trusted_dir(tmp / "a/b/cache", TrustPolicy::enforce, CreateDirs::all);
  INFO(opened.status().message());
  REQUIRE(opened.is_ok());
  CHECK(opened->path == fs::canonical(tmp.path()) / "a/b/cache");
  CHECK(opened->created == std::vector<fs::path>{opened->path.parent_path().parent_path(),
                                                 opened->path.parent_path(), opened->path});
  for (const char* level : {"a", "a/b", "a/b/cache"}) CHECK(mode_of(tmp / level) == 0700);
  CHECK(opened->warnings.empty());

  SECTION("a file opened in it is 0600 and never through a link") {
    auto file = open_in_dir(*opened, "daemon.log", O_WRONLY | O_CREAT | O_APPEND);
    REQUIRE(file.is_ok());
    CHECK(mode_of(tmp / "a/b/cache/daemon.log") == 0600);
    std::ofstream(tmp / "victim") << "root only";
    fs::create_symlink(tmp / "victim", tmp / "a/b/cache/planted");
    auto planted = open_in_dir(*opened, "planted", O_WRONLY | O_CREAT | O_APPEND);
    REQUIRE_FALSE(planted.is_ok());
    CHECK_THAT(planted.status().message(), Catch::Contains("planted is a symbolic link"));
    CHECK(fs::file_size(tmp / "victim") == 9);
  }
  SECTION("a start that fails removes what it made, and only that") {
    std::ofstream(tmp / "a/b/cache/daemon.lock") << "1 flashdir starting\n";
    remove_created(*opened);
    CHECK_FALSE(fs::exists(tmp / "a"));
    CHECK(fs::exists(tmp.path()));
  }
}

TEST_CASE("a failed start in an existing directory removes only the entries it added", "[trust]") {
  TempDir tmp;
  make_dir(tmp / "cache", 0700);
  std::ofstream(tmp / "cache/daemon.lock") << "old";
  auto opened = open_trusted_dir(tmp / "cache", TrustPolicy::enforce, CreateDirs::all);
  REQUIRE(opened.is_ok());
  CHECK(opened->created.empty());
  std::ofstream(tmp / "cache/nand.img") << "new";
  fs::create_directory(tmp / "cache/catalog");
  remove_created(*opened);
  CHECK(fs::exists(tmp / "cache/daemon.lock"));
  CHECK_FALSE(fs::exists(tmp / "cache/nand.img"));
  CHECK_FALSE(fs::exists(tmp / "cache/catalog"));
}

TEST_CASE("a cache directory others may write is refused; one they may only read is made 0700 when taken", "[trust]") {
  TempDir tmp;
  for (const mode_t mode : {0770, 0707, 0722, 01777}) {
    const fs::path dir = tmp / fmt::format("cache-{:o}", mode);
    make_dir(dir, mode);
    INFO(dir);
    CHECK_THAT(refusal(dir), Catch::Contains("is writable by group or others (mode " + fmt::format("{:04o}", mode)) &&
                                 Catch::Contains("remove it and let flashdir make it afresh"));
    CHECK(mode_of(dir) == mode);
    // A read-only check reports it and goes on.
    auto checked = open_trusted_dir(dir, TrustPolicy::warn, CreateDirs::none);
    REQUIRE(checked.is_ok());
    CHECK(checked->warnings.size() == 1);
  }
  make_dir(tmp / "readable", 0755);
  SECTION("enforced: made private once taken, with a warning") {
    auto opened = open_trusted_dir(tmp / "readable", TrustPolicy::enforce, CreateDirs::none);
    REQUIRE(opened.is_ok());
    CHECK(mode_of(tmp / "readable") == 0755);  // not before the caller takes it
    CHECK(opened->warnings.empty());
    REQUIRE(make_private(*opened).is_ok());
    CHECK(mode_of(tmp / "readable") == 0700);
    REQUIRE(opened->warnings.size() == 1);
    CHECK_THAT(opened->warnings[0], Catch::Contains("was mode 0755, readable by other users; now 0700"));
  }
  SECTION("read-only: reported, left as it is") {
    auto opened = open_trusted_dir(tmp / "readable", TrustPolicy::warn, CreateDirs::none);
    REQUIRE(opened.is_ok());
    CHECK(mode_of(tmp / "readable") == 0755);
    REQUIRE(opened->warnings.size() == 1);
    CHECK_THAT(opened->warnings[0], Catch::Contains("other users can read what it caches"));
  }
}

TEST_CASE("a cache directory another user owns is refused, not taken over", "[trust]") {
  if (::geteuid() != 0) return;  // only root can give a directory away
  TempDir tmp;
  make_dir(tmp / "cache", 0700, kOtherUser);
  CHECK_THAT(refusal(tmp / "cache", CreateDirs::all),
             Catch::Contains("cache directory " + (fs::canonical(tmp.path()) / "cache").string() +
                             " is owned by user 4321, not by user 0") &&
                 Catch::Contains("give a directory of your own"));
  struct stat st {};
  REQUIRE(::stat((tmp / "cache").c_str(), &st) == 0);
  CHECK(st.st_uid == kOtherUser);
  CHECK(mode_of(tmp / "cache") == 0700);
}

TEST_CASE("a directory above the cache that another user owns or may write is refused", "[trust]") {
  TempDir tmp;
  const fs::path top = fs::canonical(tmp.path());
  make_dir(tmp / "open", 0777);
  CHECK_THAT(refusal(tmp / "open/cache", CreateDirs::all),
             Catch::Contains((top / "open").string() + " is writable by group or others (mode 0777), who could "
                                                       "replace the cache directory") &&
                 Catch::Contains("chmod go-w"));
  CHECK_FALSE(fs::exists(tmp / "open/cache"));  // refused before anything is made below it
  make_dir(tmp / "group", 0770);
  CHECK_THAT(refusal(tmp / "group/cache", CreateDirs::all), Catch::Contains("mode 0770"));

  // A sticky directory (/tmp) lets nobody rename what they do not own.
  make_dir(tmp / "sticky", 01777);
  CHECK(open_trusted_dir(tmp / "sticky/cache", TrustPolicy::enforce, CreateDirs::all).is_ok());

  if (::geteuid() != 0) return;
  make_dir(tmp / "theirs", 0755, kOtherUser);
  CHECK_THAT(refusal(tmp / "theirs/cache", CreateDirs::all),
             Catch::Contains((top / "theirs").string() + " is owned by user 4321, who could replace the cache "
                                                         "directory"));
  CHECK_FALSE(fs::exists(tmp / "theirs/cache"));
  make_dir(tmp / "sticky/theirs", 0755, kOtherUser);
  CHECK_THAT(refusal(tmp / "sticky/theirs/cache", CreateDirs::all), Catch::Contains("is owned by user 4321"));
  // Root's own directories above are fine for everyone (/, /var, /tmp).
  CHECK(open_trusted_dir(tmp / "mine/cache", TrustPolicy::enforce, CreateDirs::all).is_ok());
}

TEST_CASE("a world-writable XDG_CACHE_HOME cannot hold another user's default cache", "[trust]") {
  TempDir tmp;
  // ${XDG_CACHE_HOME}/flashdir/NAME-HASH is predictable: a writable base lets anyone prepare it.
  make_dir(tmp / "xdg", 0777);
  CHECK_THAT(refusal(tmp / "xdg/flashdir/data-0123456789abcdef", CreateDirs::all),
             Catch::Contains("xdg is writable by group or others"));
  CHECK_FALSE(fs::exists(tmp / "xdg/flashdir"));
  if (::geteuid() != 0) return;
  make_dir(tmp / "xdg-sticky", 01777);
  make_dir(tmp / "xdg-sticky/flashdir", 0755, kOtherUser);
  CHECK_THAT(refusal(tmp / "xdg-sticky/flashdir/data-0123456789abcdef", CreateDirs::all),
             Catch::Contains("xdg-sticky/flashdir is owned by user 4321"));
  make_dir(tmp / "xdg-sticky/other", 0755);
  make_dir(tmp / "xdg-sticky/other/data-0123456789abcdef", 0700, kOtherUser);
  CHECK_THAT(refusal(tmp / "xdg-sticky/other/data-0123456789abcdef", CreateDirs::all),
             Catch::Contains("data-0123456789abcdef is owned by user 4321"));
}

TEST_CASE("the entries flashdir opens must be its own: no link, no other owner, one name", "[trust]") {
  TempDir tmp;
  const fs::path cache = tmp / "cache";
  make_dir(cache, 0700);
  std::ofstream(tmp / "victim1") << "root only";
  const CacheDirPaths paths(cache);

  SECTION("a link planted as the log") {
    fs::create_symlink(tmp / "victim1", cache / kLogFileName);
    CHECK_THAT(refusal(cache), Catch::Contains("daemon.log is a symbolic link: flashdir never follows a link") &&
                                   Catch::Contains("remove it"));
  }
  SECTION("a link planted as the catalog") {
    fs::create_directory(tmp / "elsewhere");
    fs::create_directory_symlink(tmp / "elsewhere", paths.catalog);
    CHECK_THAT(refusal(cache), Catch::Contains("catalog is a symbolic link"));
  }
  SECTION("a catalog that is a file") {
    std::ofstream(paths.catalog) << "x";
    CHECK_THAT(refusal(cache), Catch::Contains("catalog is not a directory"));
  }
  SECTION("a hard link as the image") {
    fs::create_hard_link(tmp / "victim1", paths.image);
    CHECK_THAT(refusal(cache), Catch::Contains("nand.img has 2 names"));
  }
  SECTION("a link planted as the restart image") {
    fs::create_symlink(tmp / "victim1", paths.restart_image);
    CHECK_THAT(refusal(cache), Catch::Contains("restart.img is a symbolic link"));
  }
  SECTION("a lock others may write") {
    std::ofstream(cache / "daemon.lock") << "1";
    fs::permissions(cache / "daemon.lock", fs::perms::others_write, fs::perm_options::add);
    CHECK_THAT(refusal(cache), Catch::Contains("daemon.lock is writable by group or others"));
  }
  SECTION("a catalog another user owns") {
    if (::geteuid() != 0) return;
    make_dir(paths.catalog, 0700, kOtherUser);
    CHECK_THAT(refusal(cache), Catch::Contains("catalog is owned by user 4321"));
  }
  CHECK(fs::file_size(tmp / "victim1") == 9);
}

TEST_CASE("links in the path given are resolved, then the real path is checked", "[trust]") {
  TempDir tmp;
  make_dir(tmp / "real", 0700);
  fs::create_directory_symlink(tmp / "real", tmp / "link");
  auto opened = open_trusted_dir(tmp / "link", TrustPolicy::enforce, CreateDirs::none);
  REQUIRE(opened.is_ok());
  CHECK(opened->path == fs::canonical(tmp / "real"));
  make_dir(tmp / "open", 0777);
  make_dir(tmp / "open/real", 0700);
  fs::create_directory_symlink(tmp / "open/real", tmp / "via");
  CHECK_THAT(refusal(tmp / "via"), Catch::Contains("open is writable by group or others"));
  CHECK_THAT(refusal(tmp / "missing"), Catch::Contains("missing does not exist"));
  CHECK_THAT(refusal(""), Catch::Contains("the cache directory path is empty"));
}
