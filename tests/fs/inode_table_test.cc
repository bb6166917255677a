// The inode table: lookup counts and forget, and a bounded number of O_PATH descriptors with
// evicted inodes reopened by handle.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <optional>

#include "fs/inode_table.h"
#include "support/temp_dir.h"

using namespace flashdir;
using namespace flashdir::fs;
using flashdir::testing::TempDir;

namespace {

struct Fixture {
  TempDir temp;
  std::unique_ptr<InodeTable> table;

  explicit Fixture(std::size_t max_fds) {
    UniqueFd root(::open(temp.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct stat st {};
    REQUIRE(::fstat(root.get(), &st) == 0);
    table = std::make_unique<InodeTable>(std::move(root), st, max_fds);
  }

  Inode& look_up(const std::string& name) {
    UniqueFd fd(::openat(table->root_fd(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    REQUIRE(fd.valid());
    struct stat st {};
    REQUIRE(::fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0);
    return table->remember(std::move(fd), st);
  }

  ino_t ino_through(Inode& inode) {
    auto fd = table->path_fd(inode);
    REQUIRE(fd.is_ok());
    struct stat st {};
    REQUIRE(::fstatat((*fd)->get(), "", &st, AT_EMPTY_PATH) == 0);
    return st.st_ino;
  }
};

}  // namespace

TEST_CASE("one inode per backing object, kept until its lookups are forgotten") {
  Fixture f(100);
  std::ofstream(f.temp / "a") << "a";
  std::filesystem::create_hard_link(f.temp / "a", f.temp / "b");
  Inode& a = f.look_up("a");
  Inode& b = f.look_up("b");
  CHECK(&a == &b);  // hard links: one inode
  CHECK(f.table->counts().inodes == 2);  // root + a
  f.table->forget(a, 1);
  CHECK(f.table->counts().inodes == 2);
  f.table->forget(a, 1);
  CHECK(f.table->counts().inodes == 1);
  f.table->forget(f.table->root(), 5);  // the root is never dropped
  CHECK(f.table->counts().inodes == 1);
}

TEST_CASE("descriptors stay bounded; evicted inodes come back by handle") {
  constexpr std::size_t kMax = 8;
  Fixture f(kMax);
  if (!f.table->reopens_by_handle()) {
    WARN("not tested: open_by_handle_at needs CAP_DAC_READ_SEARCH");
    return;
  }
  std::vector<Inode*> inodes;
  std::vector<ino_t> inos;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "f" + std::to_string(i);
    std::ofstream(f.temp / name) << name;
    inodes.push_back(&f.look_up(name));
    struct stat st {};
    REQUIRE(::stat((f.temp / name).c_str(), &st) == 0);
    inos.push_back(st.st_ino);
    CHECK(f.table->counts().cached_fds <= kMax);
  }
  CHECK(f.table->counts().evictions >= 40 - kMax);
  for (std::size_t i = 0; i < inodes.size(); ++i) CHECK(f.ino_through(*inodes[i]) == inos[i]);
  CHECK(f.table->counts().reopens > 0);
  CHECK(f.table->counts().cached_fds <= kMax);
}

TEST_CASE("a descriptor in use survives its eviction") {
  Fixture f(2);
  if (!f.table->reopens_by_handle()) {
    WARN("not tested: open_by_handle_at needs CAP_DAC_READ_SEARCH");
    return;
  }
  std::ofstream(f.temp / "x") << "x";
  Inode& x = f.look_up("x");
  auto held = f.table->path_fd(x);
  REQUIRE(held.is_ok());
  for (int i = 0; i < 5; ++i) {
    std::ofstream(f.temp / ("y" + std::to_string(i))) << "y";
    f.look_up("y" + std::to_string(i));
  }
  struct stat st {};
  CHECK(::fstatat((*held)->get(), "", &st, AT_EMPTY_PATH) == 0);  // still open
}

TEST_CASE("a removed object is ESTALE once its descriptor was evicted") {
  Fixture f(2);
  if (!f.table->reopens_by_handle()) {
    WARN("not tested: open_by_handle_at needs CAP_DAC_READ_SEARCH");
    return;
  }
  std::ofstream(f.temp / "doomed") << "d";
  Inode& doomed = f.look_up("doomed");
  for (int i = 0; i < 4; ++i) {
    std::ofstream(f.temp / ("z" + std::to_string(i))) << "z";
    f.look_up("z" + std::to_string(i));
  }
  std::filesystem::remove(f.temp / "doomed");
  auto fd = f.table->path_fd(doomed);
  REQUIRE_FALSE(fd.is_ok());
  CHECK(fd.error() == ESTALE);
}

TEST_CASE("an inode known by name only is opened at its first use, and only if its name is still that object") {
  Fixture f(100);
  std::filesystem::create_directory(f.temp / "d");
  std::ofstream(f.temp / "d" / "a") << "a";
  struct stat d_st {}, a_st {};
  REQUIRE(::stat((f.temp / "d").c_str(), &d_st) == 0);
  REQUIRE(::stat((f.temp / "d" / "a").c_str(), &a_st) == 0);
  std::vector<std::string> stale;
  f.table->on_stale_name([&](Inode&, std::string_view name) { stale.emplace_back(name); });
  Inode* named_d = f.table->remember_named(f.table->root(), "d", d_st);
  REQUIRE(named_d != nullptr);
  Inode& d = *named_d;
  Inode* named_a = f.table->remember_named(d, "a", a_st);
  REQUIRE(named_a != nullptr);
  Inode& a = *named_a;
  CHECK(f.table->counts().named_only == 2);
  CHECK(f.table->counts().cached_fds == 0);  // nothing opened yet (the root's is not counted)

  SECTION("opened through its parent, itself opened by name") {
    CHECK(f.ino_through(a) == a_st.st_ino);
    CHECK(f.table->counts().named_only == 0);
    // A backing lookup of the same object finds the same inode; an answer by name no longer
    // joins an opened one (its number might be another object's by now).
    CHECK(&f.look_up("d") == &d);
    CHECK(f.table->remember_named(d, "a", a_st) == nullptr);
  }
  SECTION("changed since the answer: opening it is stale, and a backing lookup gets an inode of its own") {
    REQUIRE(::chmod((f.temp / "d" / "a").c_str(), 0600) == 0);
    auto fd = f.table->path_fd(a);
    REQUIRE_FALSE(fd.is_ok());
    CHECK(fd.error() == ESTALE);
    UniqueFd d_fd(::openat(f.table->root_fd(), "d", O_PATH | O_CLOEXEC));
    UniqueFd a_fd(::openat(d_fd.get(), "a", O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat now {};
    REQUIRE(::fstat(a_fd.get(), &now) == 0);
    Inode& fresh = f.table->remember(std::move(a_fd), now);
    CHECK(&fresh != &a);
    CHECK(f.ino_through(fresh) == a_st.st_ino);
    CHECK_FALSE(f.table->path_fd(a).is_ok());
    f.table->forget(a, 1);
    f.table->forget(fresh, 1);
  }
  SECTION("a name that now names another object is stale, and said to be") {
    std::ofstream(f.temp / "r") << "r";
    struct stat r_st {};
    REQUIRE(::stat((f.temp / "r").c_str(), &r_st) == 0);
    Inode* r = f.table->remember_named(f.table->root(), "r", r_st);
    REQUIRE(r != nullptr);
    std::filesystem::rename(f.temp / "r", f.temp / "old");
    std::ofstream(f.temp / "r") << "other";
    auto fd = f.table->path_fd(*r);
    REQUIRE_FALSE(fd.is_ok());
    CHECK(fd.error() == ESTALE);
    CHECK(stale == std::vector<std::string>{"r"});
    // A directory whose entries changed behind the mount is stale too (its change time moved).
    std::ofstream(f.temp / "d" / "new") << "n";
    CHECK_FALSE(f.table->path_fd(a).is_ok());
    CHECK(stale == std::vector<std::string>{"r", "d"});
  }
  SECTION("opened before its name is renamed through the mount, it follows the object") {
    f.table->open_named(d, "a");
    std::filesystem::rename(f.temp / "d" / "a", f.temp / "d" / "moved");
    CHECK(f.ino_through(a) == a_st.st_ino);
  }
  SECTION("forgetting the child gives back its parent's lookup") {
    f.table->forget(a, 1);
    CHECK(f.table->counts().inodes == 2);  // root + d
    f.table->forget(d, 1);
    CHECK(f.table->counts().inodes == 1);
    CHECK(f.table->counts().named_only == 0);
  }
}

TEST_CASE("the siblings of an inode known by name only are handed out once each, and the open's stat comes back") {
  Fixture f(100);
  std::vector<Inode*> named;
  for (const char* name : {"a", "b", "c", "d", "sub"}) {
    if (std::string_view(name) == "sub") {
      std::filesystem::create_directory(f.temp / name);
    } else {
      std::ofstream(f.temp / name) << name;
    }
    struct stat st {};
    REQUIRE(::stat((f.temp / name).c_str(), &st) == 0);
    named.push_back(f.table->remember_named(f.table->root(), name, st));
    REQUIRE(named.back() != nullptr);
  }
  std::vector<Inode*> taken = f.table->take_named_siblings(*named[0], 3);
  CHECK(taken.size() == 3);
  CHECK(std::find(taken.begin(), taken.end(), named[0]) == taken.end());
  std::vector<Inode*> rest = f.table->take_named_siblings(*named[0], 10);
  CHECK(rest.size() == 1);
  CHECK(f.table->take_named_siblings(*named[1], 10).empty());  // every sibling handed out
  taken.insert(taken.end(), rest.begin(), rest.end());
  for (Inode* sibling : taken) {
    std::optional<struct statx> opened;
    REQUIRE(f.table->path_fd(*sibling, &opened).is_ok());
    REQUIRE(opened.has_value());
    CHECK(opened->stx_ino == sibling->ino());
    std::optional<struct statx> again;
    REQUIRE(f.table->path_fd(*sibling, &again).is_ok());
    CHECK_FALSE(again.has_value());  // had its descriptor: nothing stat'ed
    f.table->forget(*sibling, 1);   // the lookup take_named_siblings added
  }
  CHECK(f.table->counts().named_only == 1);  // named[0], never opened
  CHECK(f.table->take_named_siblings(*named[0], 10).empty());
  for (Inode* inode : named) f.table->forget(*inode, 1);
  CHECK(f.table->counts().inodes == 1);
}

TEST_CASE("a sibling whose answer kept a handle is not handed out to be opened ahead") {
  Fixture f(100);
  if (!f.table->reopens_by_handle()) {
    WARN("this process cannot open by file handle here (CAP_DAC_READ_SEARCH): nothing to test");
    return;
  }
  std::vector<Inode*> named;
  for (const char* name : {"opened", "by-handle", "by-name"}) {
    std::ofstream(f.temp / name) << name;
    UniqueFd fd(::openat(f.table->root_fd(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    REQUIRE(fd.valid());
    struct stat st {};
    REQUIRE(::fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0);
    std::vector<unsigned char> handle;
    if (std::string_view(name) == "by-handle") handle = f.table->handle_to_keep(fd.get(), st);
    named.push_back(f.table->remember_named(f.table->root(), name, st, std::move(handle)));
    REQUIRE(named.back() != nullptr);
  }
  std::vector<Inode*> taken = f.table->take_named_siblings(*named[0], 10);
  REQUIRE(taken.size() == 1);
  CHECK(taken[0] == named[2]);
  f.table->forget(*taken[0], 1);
  CHECK(f.ino_through(*named[1]) == named[1]->ino());  // opened at its use, by its handle
  CHECK(f.table->counts().named_opened_by_handle == 1);
  for (Inode* inode : named) f.table->forget(*inode, 1);
  CHECK(f.table->counts().inodes == 1);
}
