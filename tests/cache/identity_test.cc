// A file is its identity, not its path (doc/daemon.md "File identity"): two files that meet at
// one path never share cached pages, a rename or a renumbering alone never discards a file's
// cache, and a restart writes dirty pages back only into the file they were written to.
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine_rig.h"

using flashdir::IdentityRule;
using flashdir::cache::EngineOptions;
using flashdir::cache::FileHandle;
using flashdir::cache::RenameKind;
using flashdir::cache::WriteMode;
using flashdir::testing::EngineRig;
using flashdir::testing::pattern;

namespace {

EngineOptions in_mode(WriteMode mode) {
  EngineOptions options;
  options.write_mode = mode;
  return options;
}

WriteMode any_write_mode() {
  return GENERATE(WriteMode::write_through, WriteMode::write_back, WriteMode::write_around);
}

std::vector<std::uint8_t> read(EngineRig& rig, FileHandle file, std::uint64_t offset, std::size_t length) {
  std::vector<std::uint8_t> bytes(length);
  auto got = rig.engine().read(file, offset, bytes);
  INFO(got.status().to_string());
  REQUIRE(got.is_ok());
  bytes.resize(*got);
  return bytes;
}

FileHandle open(EngineRig& rig, const std::string& name) {
  auto file = rig.engine().open_file(name);
  INFO(file.status().to_string());
  REQUIRE(file.is_ok());
  return *file;
}

void write(EngineRig& rig, FileHandle file, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  auto written = rig.engine().write(file, offset, bytes);
  INFO(written.status().to_string());
  REQUIRE(written.is_ok());
}

// A rename in the backing directory behind the engine, as another program would make it.
void rename_behind(EngineRig& rig, const std::string& from, const std::string& to, unsigned int flags = 0) {
  REQUIRE(::renameat2(AT_FDCWD, rig.backing_path(from).c_str(), AT_FDCWD, rig.backing_path(to).c_str(), flags) == 0);
}

std::vector<std::uint8_t> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("identity: a rename over an open file leaves each file exactly its own bytes") {
  const WriteMode mode = any_write_mode();
  const bool through_engine = GENERATE(true, false);
  CAPTURE(static_cast<int>(mode), through_engine);
  EngineRig rig(in_mode(mode));
  const std::uint32_t P = rig.page_size();
  rig.put("v", pattern(1, 4 * P));
  rig.put("a", pattern(2, 4 * P));
  const FileHandle victim = open(rig, "v");
  CHECK(read(rig, victim, 0, 4 * P) == pattern(1, 4 * P));  // cached

  if (through_engine) {
    REQUIRE(rig.engine().rename("a", "v").is_ok());
  } else {
    rename_behind(rig, "a", "v");
  }
  const auto secret = pattern(3, P);
  write(rig, victim, 0, secret);
  // The file now at v is the other one: none of the victim's bytes, cached or new.
  const FileHandle other = open(rig, "v");
  CHECK(read(rig, other, 0, 4 * P) == pattern(2, 4 * P));
  const auto mine = pattern(4, P);
  write(rig, other, P, mine);
  // Each descriptor reads its own file.
  CHECK(read(rig, victim, 0, P) == secret);
  CHECK(read(rig, victim, P, P) == pattern(1, P, P));
  CHECK(read(rig, other, 0, P) == pattern(2, P));
  CHECK(read(rig, other, P, P) == mine);
  REQUIRE(rig.engine().release(victim).is_ok());
  REQUIRE(rig.engine().release(other).is_ok());
  auto expected = pattern(2, 4 * P);
  std::copy(mine.begin(), mine.end(), expected.begin() + P);
  CHECK(rig.get("v") == expected);
  CHECK(rig.read_through("v", 0, 4 * P) == expected);
}

TEST_CASE("identity: RENAME_EXCHANGE swaps the names, never the contents") {
  const WriteMode mode = any_write_mode();
  const bool through_engine = GENERATE(true, false);
  CAPTURE(static_cast<int>(mode), through_engine);
  EngineRig rig(in_mode(mode));
  const std::uint32_t P = rig.page_size();
  rig.put("f1", pattern(1, 3 * P));
  rig.put("f2", pattern(2, 3 * P));
  CHECK(rig.read_through("f2", 0, 3 * P) == pattern(2, 3 * P));  // cached, then closed
  const FileHandle first = open(rig, "f1");
  const auto written = pattern(3, P);
  write(rig, first, 0, written);
  rename_behind(rig, "f1", "f2", RENAME_EXCHANGE);
  if (through_engine) REQUIRE(rig.engine().renamed("f1", "f2", RenameKind::exchange).is_ok());

  CHECK(read(rig, first, 0, P) == written);  // the descriptor's own file, now named f2
  CHECK(rig.read_through("f1", 0, 3 * P) == pattern(2, 3 * P));
  REQUIRE(rig.engine().release(first).is_ok());
  auto expected = pattern(1, 3 * P);
  std::copy(written.begin(), written.end(), expected.begin());
  CHECK(rig.get("f2") == expected);
  CHECK(rig.read_through("f2", 0, 3 * P) == expected);
  CHECK(rig.get("f1") == pattern(2, 3 * P));
}

TEST_CASE("identity: a write-back file renamed over while open keeps its acknowledged writes") {
  EngineRig rig(in_mode(WriteMode::write_back));
  const std::uint32_t P = rig.page_size();
  rig.put("f1", pattern(1, 2 * P));
  rig.put("f2", pattern(2, 2 * P));
  const FileHandle file = open(rig, "f2");
  const auto written = pattern(3, 2 * P);
  write(rig, file, 0, written);
  REQUIRE(rig.engine().rename("f1", "f2").is_ok());
  CHECK(read(rig, file, 0, 2 * P) == written);
  CHECK(rig.engine().stats().dirty_pages == 2);
  REQUIRE(rig.engine().release(file).is_ok());
  // Its file has no name left: its pages (dirty ones too) go, and nothing reached f2.
  CHECK(rig.engine().stats().cached_pages == 0);
  CHECK(rig.get("f2") == pattern(1, 2 * P));
}

TEST_CASE("identity: a file removed and made again at its path is a new file") {
  const WriteMode mode = any_write_mode();
  const bool through_engine = GENERATE(true, false);
  CAPTURE(static_cast<int>(mode), through_engine);
  EngineRig rig(in_mode(mode));
  const std::uint32_t P = rig.page_size();
  rig.put("u", pattern(1, 2 * P));
  CHECK(rig.read_through("u", 0, 2 * P) == pattern(1, 2 * P));
  if (through_engine) {
    REQUIRE(rig.engine().unlink("u").is_ok());
  } else {
    std::filesystem::remove(rig.backing_path("u"));
  }
  rig.put("u", pattern(2, 2 * P));
  CHECK(rig.read_through("u", 0, 2 * P) == pattern(2, 2 * P));
}

TEST_CASE("identity: a renamed file keeps its cached pages") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("a", pattern(1, 4 * P));
  CHECK(rig.read_through("a", 0, 4 * P) == pattern(1, 4 * P));
  REQUIRE(rig.engine().rename("a", "b").is_ok());
  const auto before = rig.engine().stats();
  CHECK(rig.read_through("b", 0, 4 * P) == pattern(1, 4 * P));
  const auto after = rig.engine().stats();
  CHECK(after.read_hit_pages - before.read_hit_pages == 4);
  CHECK(after.read_miss_pages == before.read_miss_pages);
}

TEST_CASE("identity: a file whose last name goes through the engine while open loses its pages at its last release") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("g", pattern(1, 3 * P));
  const FileHandle file = open(rig, "g");
  CHECK(read(rig, file, 0, 3 * P) == pattern(1, 3 * P));
  REQUIRE(rig.engine().unlink("g").is_ok());
  CHECK(read(rig, file, 0, 3 * P) == pattern(1, 3 * P));
  CHECK(rig.engine().stats().cached_pages == 3);
  REQUIRE(rig.engine().release(file).is_ok());
  CHECK(rig.engine().stats().cached_pages == 0);
}

TEST_CASE("identity: a file removed behind a reader's open is never served for the file made at its path") {
  // The release of a file only read keeps its record as the open validated it (no stat: a round
  // trip per close on a network store; round_trips_test counts them). Removed behind the engine
  // meanwhile, its pages stay until the key is met again: a file made later at its path (or
  // given its inode number) is validated against the record and served its own bytes.
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("g", pattern(1, 3 * P));
  const FileHandle file = open(rig, "g");
  CHECK(read(rig, file, 0, 3 * P) == pattern(1, 3 * P));
  std::filesystem::remove(rig.backing_path("g"));  // behind the engine: nobody tells it
  CHECK(read(rig, file, 0, 3 * P) == pattern(1, 3 * P));
  const auto before = rig.engine().stats();
  REQUIRE(rig.engine().release(file).is_ok());
  CHECK(rig.engine().stats().backing_errors == before.backing_errors);
  rig.put("g", pattern(2, 3 * P));
  CHECK(rig.read_through("g", 0, 3 * P) == pattern(2, 3 * P));
}

TEST_CASE("identity: a file a rename through the engine replaced while open loses its pages at its last release") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("g", pattern(1, 3 * P));
  rig.put("h", pattern(2, P));
  const FileHandle file = open(rig, "g");
  CHECK(read(rig, file, 0, 3 * P) == pattern(1, 3 * P));
  REQUIRE(rig.engine().rename("h", "g").is_ok());
  CHECK(read(rig, file, 0, 3 * P) == pattern(1, 3 * P));
  CHECK(rig.engine().stats().cached_pages == 3);
  REQUIRE(rig.engine().release(file).is_ok());
  CHECK(rig.engine().stats().cached_pages == 0);
}

TEST_CASE("identity: over a backing that renumbers inodes, a remount keeps every cached file") {
  // claims_stable = false is a FUSE backing (sshfs): the engine takes the path rule. true is a
  // backing that hides it: the inode rule sees numbers change with nothing else and adopts them.
  const bool claims_stable = GENERATE(false, true);
  CAPTURE(claims_stable);
  EngineRig rig;
  REQUIRE(rig.use_renumbering_backing(claims_stable).is_ok());
  CHECK(rig.engine().identity_rule() == (claims_stable ? IdentityRule::inode : IdentityRule::path));
  const std::uint32_t P = rig.page_size();
  rig.put("x", pattern(1, 4 * P));
  rig.put("y", pattern(2, 4 * P));
  CHECK(rig.read_through("x", 0, 4 * P) == pattern(1, 4 * P));
  CHECK(rig.read_through("y", 0, 4 * P) == pattern(2, 4 * P));
  REQUIRE(rig.restart().is_ok());
  rig.renumber_inodes();  // the remounted backing numbers y first
  CHECK(rig.read_through("y", 0, 4 * P) == pattern(2, 4 * P));
  CHECK(rig.read_through("x", 0, 4 * P) == pattern(1, 4 * P));
  const auto stats = rig.engine().stats();
  CHECK(stats.read_hit_pages == 8);
  CHECK(stats.read_miss_pages == 0);
  CHECK(stats.stale_drops == 0);
  CHECK(stats.renumbered_files == (claims_stable ? 2 : 0));
}

TEST_CASE("identity: under the path rule a file put at a path behind the engine is seen as another file") {
  EngineRig rig;
  REQUIRE(rig.use_renumbering_backing(false).is_ok());
  const std::uint32_t P = rig.page_size();
  rig.put("v", pattern(1, 2 * P));
  rig.put("a", pattern(2, 2 * P));
  // Made at another time: files written within one clock tick of each other have the same
  // times, and under the path rule only attributes tell files apart (doc/daemon.md).
  const timespec earlier[2] = {{1'000'000'000, 0}, {1'000'000'000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, rig.backing_path("v").c_str(), earlier, 0) == 0);
  const FileHandle victim = open(rig, "v");
  CHECK(read(rig, victim, 0, 2 * P) == pattern(1, 2 * P));
  rename_behind(rig, "a", "v");
  // A renumbering backing gives the new file at v the number v had: only its other attributes
  // (here its mtime) tell it apart.
  const FileHandle other = open(rig, "v");
  CHECK(read(rig, other, 0, 2 * P) == pattern(2, 2 * P));
  CHECK(read(rig, victim, 0, 2 * P) == pattern(1, 2 * P));
  REQUIRE(rig.engine().release(victim).is_ok());
  REQUIRE(rig.engine().release(other).is_ok());
  CHECK(rig.read_through("v", 0, 2 * P) == pattern(2, 2 * P));
}

TEST_CASE("identity: an open whose stat predates the engine's own write-back joins the file's open state") {
  // Under the path rule an open that finds the file changed since the open state's last own
  // change takes it for another file put at the path: a state and a record of its own. The
  // caller's stat may come before the flusher's latest write-back of the file; taken for a
  // change behind the engine, it split one file into two states, and the second open read
  // the backing file's old bytes under the first open's unwritten ones (found by the fio
  // matrix over slowstore: a warm write-back cache emptied by four writers of one file).
  EngineOptions options = in_mode(WriteMode::write_back);
  options.identity = IdentityRule::path;
  EngineRig rig(options);
  const std::uint32_t P = rig.page_size();
  rig.put("x", pattern(1, 4 * P));
  const FileHandle first = open(rig, "x");
  write(rig, first, 0, pattern(2, P));
  // The caller of the second open stats the file...
  const int fd = ::open(rig.backing_path("x").c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto backing = flashdir::cache::adopt_posix_backing_file(fd, "x");
  auto stat_of_caller = backing->stat();
  REQUIRE(stat_of_caller.is_ok());
  // ...then the engine writes the first open's page back (a new mtime: coarse clocks tick every
  // few milliseconds) and the first open writes another, before the second open reaches it.
  ::usleep(20'000);
  REQUIRE(rig.engine().write_back(first).is_ok());
  write(rig, first, P, pattern(3, P));

  auto second = rig.engine().open_file("x", std::move(backing), *stat_of_caller);
  INFO(second.status().to_string());
  REQUIRE(second.is_ok());
  CHECK(read(rig, *second, 0, 2 * P) == [&] {
    auto both = pattern(2, P);
    const auto next = pattern(3, P);
    both.insert(both.end(), next.begin(), next.end());
    return both;
  }());
  CHECK(rig.engine().stats().stale_drops == 0);
  REQUIRE(rig.engine().release(*second).is_ok());
  REQUIRE(rig.engine().release(first).is_ok());
  CHECK(rig.get("x").size() == 4 * P);
  CHECK(rig.read_through("x", P, P) == pattern(3, P));
}

TEST_CASE("identity: a change of rule drops the clean pages once") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("c", pattern(1, 2 * P));
  CHECK(rig.read_through("c", 0, 2 * P) == pattern(1, 2 * P));
  EngineOptions options;
  options.identity = IdentityRule::path;
  REQUIRE(rig.reopen_with(options).is_ok());
  CHECK(rig.engine().identity_rule() == IdentityRule::path);
  CHECK(rig.engine().stats().cached_pages == 0);
  CHECK(rig.read_through("c", 0, 2 * P) == pattern(1, 2 * P));
  REQUIRE(rig.reopen_with(options).is_ok());
  CHECK(rig.engine().stats().cached_pages == 2);
}

TEST_CASE("restart: dirty pages go back only into the file they were written to; others are saved") {
  const bool replaced = GENERATE(true, false);  // another file took the name, or the file is gone
  CAPTURE(replaced);
  EngineRig rig(in_mode(WriteMode::write_back));
  const std::uint32_t P = rig.page_size();
  rig.put("x", pattern(1, 3 * P));
  rig.put("victim", pattern(2, 3 * P));
  const FileHandle file = open(rig, "x");
  const auto written = pattern(3, 2 * P);
  write(rig, file, P, written);
  REQUIRE(rig.engine().fsync(file).is_ok());  // durable in the cache only

  if (replaced) {
    rename_behind(rig, "victim", "x");
  } else {
    std::filesystem::remove(rig.backing_path("x"));
  }
  REQUIRE(rig.power_cycle().is_ok());
  const auto restart = rig.engine().stats().restart;
  CHECK(restart.written_back_slots == 0);
  CHECK(restart.lost_dirty_slots == 0);
  CHECK(restart.saved_dirty_slots == 2);
  REQUIRE(restart.saved_files.size() == 1);
  if (replaced) CHECK(rig.get("x") == pattern(2, 3 * P));  // the file now at x is untouched
  const auto saved = rig.lost_found_dir() / restart.saved_files.front();
  CHECK(saved.filename().string().find("-uid0-x") != std::string::npos);
  const auto bytes = file_bytes(saved);
  REQUIRE(bytes.size() == 3 * P);
  CHECK(std::vector<std::uint8_t>(bytes.begin() + P, bytes.end()) == written);
  CHECK(std::filesystem::exists(saved.string() + ".txt"));
  CHECK(rig.engine().stats().cached_pages == 0);
  CHECK(rig.engine().stats().dirty_pages == 0);
}

TEST_CASE("restart: under the path rule a file of another owner at the path is not written into") {
  EngineOptions options = in_mode(WriteMode::write_back);
  EngineRig rig(options);
  REQUIRE(rig.use_renumbering_backing(false).is_ok());
  const std::uint32_t P = rig.page_size();
  rig.put("x", pattern(1, 2 * P));
  rig.put("victim", pattern(2, 2 * P));
  REQUIRE(::chown(rig.backing_path("victim").c_str(), 65534, 65534) == 0);
  const FileHandle file = open(rig, "x");
  write(rig, file, 0, pattern(3, P));
  REQUIRE(rig.engine().fsync(file).is_ok());
  rename_behind(rig, "victim", "x");
  REQUIRE(rig.power_cycle().is_ok());
  CHECK(rig.get("x") == pattern(2, 2 * P));
  CHECK(rig.engine().stats().restart.saved_dirty_slots == 1);
}

TEST_CASE("open: a cache is refused over a backing directory other than its own") {
  EngineRig rig;
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, P));
  CHECK(rig.read_through("f", 0, P) == pattern(1, P));
  const auto other = rig.scratch_dir() / "other";
  std::filesystem::create_directory(other);
  const flashdir::Status refused = rig.reopen_over(other);
  CHECK(refused.code() == flashdir::StatusCode::invalid_argument);
  CHECK(refused.message().find("belongs to backing directory") != std::string::npos);
}

TEST_CASE("close-to-open: an open that meets another handle of a file changed behind the engine reads it fresh") {
  // The kernel sends RELEASE asynchronously: a close(2) and the next open(2) of the file may meet
  // in the engine, the old handle still open, and the open used to take the cached pages on trust.
  const WriteMode mode = any_write_mode();
  CAPTURE(static_cast<int>(mode));
  EngineRig rig(in_mode(mode));
  const std::uint32_t P = rig.page_size();
  rig.put("f", pattern(1, 2 * P));
  struct stat before {};
  REQUIRE(::stat(rig.backing_path("f").c_str(), &before) == 0);
  const FileHandle first = open(rig, "f");
  CHECK(read(rig, first, 0, 2 * P) == pattern(1, 2 * P));  // cached
  // A same-size rewrite behind the engine, its modification time put back: only ctime shows it.
  rig.put("f", pattern(2, 2 * P));
  const timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, rig.backing_path("f").c_str(), times, 0) == 0);
  const FileHandle second = open(rig, "f");
  CHECK(read(rig, second, 0, 2 * P) == pattern(2, 2 * P));
  REQUIRE(rig.engine().release(first).is_ok());
  REQUIRE(rig.engine().release(second).is_ok());
  CHECK(rig.read_through("f", 0, 2 * P) == pattern(2, 2 * P));
}
