// The lock daemon, mkfs and fsck share (flashdir/cache_lock.h): one writer at a time, readers
// together, and a daemon that is closing the cache waited for, one still serving refused at once.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "flashdir/cache_lock.h"
#include "support/temp_dir.h"

using namespace flashdir;
using flashdir::testing::TempDir;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

TrustedDir cache_dir(const TempDir& tmp) {
  auto opened = open_trusted_dir(tmp / "cache", TrustPolicy::enforce, CreateDirs::all);
  REQUIRE(opened.is_ok());
  return std::move(opened.value());
}

LockRequest request(const std::string& program, const std::string& state) {
  LockRequest r;
  r.program = program;
  r.state = state;
  return r;
}

LockRequest daemon_waiting(std::chrono::milliseconds wait, std::vector<std::string>& told) {
  LockRequest r = request(kDaemonProgram, "starting");
  r.wait_for_closing = wait;
  r.on_wait = [&told](const std::string& message) { told.push_back(message); };
  return r;
}

std::string lock_line(const TempDir& tmp) {
  std::ifstream in(tmp / "cache" / kLockFileName);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("one writer at a time; the lock line names the holder for whoever is refused", "[lock]") {
  TempDir tmp;
  const TrustedDir dir = cache_dir(tmp);
  auto mkfs = lock_cache_dir(dir, request("mkfs.flashdir", "formatting"));
  REQUIRE(mkfs.is_ok());
  CHECK(mkfs->held());
  CHECK(mkfs->created_file());
  const std::string pid = std::to_string(::getpid());
  CHECK(lock_line(tmp) == pid + " mkfs.flashdir formatting\n");
  struct stat st {};
  REQUIRE(::stat((tmp / "cache" / kLockFileName).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  std::vector<std::string> told;
  auto daemon = lock_cache_dir(dir, daemon_waiting(10s, told));
  REQUIRE_FALSE(daemon.is_ok());
  CHECK_THAT(daemon.status().message(),
             Catch::Contains("is in use by mkfs.flashdir (pid " + pid + ", formatting); try again once it is done"));
  CHECK(told.empty());  // only a closing daemon is waited for
  auto reader = lock_cache_dir(dir, [] { LockRequest r = request("fsck.flashdir", ""); r.shared = true; return r; }());
  CHECK_FALSE(reader.is_ok());

  mkfs = Status::io_error("released");
  auto again = lock_cache_dir(dir, request(kDaemonProgram, "starting"));
  REQUIRE(again.is_ok());
  CHECK_FALSE(again->created_file());
  REQUIRE(again->set_state(std::string(kStateServing) + " /mnt/some where").is_ok());
  CHECK(lock_line(tmp) == pid + " flashdir serving /mnt/some where\n");
  REQUIRE(again->set_state(kStateClosing).is_ok());
  CHECK(lock_line(tmp) == pid + " flashdir closing\n");
}

TEST_CASE("readers share the lock, and never create the lock file", "[lock]") {
  TempDir tmp;
  const TrustedDir dir = cache_dir(tmp);
  LockRequest read = request("fsck.flashdir", "checking");
  read.shared = true;
  auto none = lock_cache_dir(dir, read);
  REQUIRE(none.is_ok());
  CHECK_FALSE(none->held());
  CHECK_FALSE(fs::exists(tmp / "cache" / kLockFileName));
  REQUIRE(lock_cache_dir(dir, request("mkfs.flashdir", "formatting")).is_ok());  // made the file, released
  auto first = lock_cache_dir(dir, read);
  auto second = lock_cache_dir(dir, read);
  REQUIRE(first.is_ok());
  REQUIRE(second.is_ok());
  CHECK(first->held());
  // The line is the last writer's: one that is gone says nothing about who holds the lock now.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  REQUIRE(::waitpid(gone, nullptr, 0) == gone);
  std::ofstream(tmp / "cache" / kLockFileName) << gone << " flashdir closing\n";
  auto writer = lock_cache_dir(dir, request(kDaemonProgram, "starting"));
  REQUIRE_FALSE(writer.is_ok());
  CHECK_THAT(writer.status().message(),
             Catch::Contains("is in use by a read-only check (fsck.flashdir -n); try again once it is done"));
}

TEST_CASE("a daemon that is closing the cache is waited for; one still mounted is refused at once", "[lock]") {
  TempDir tmp;
  const TrustedDir dir = cache_dir(tmp);
  auto old = lock_cache_dir(dir, request(kDaemonProgram, "starting"));
  REQUIRE(old.is_ok());
  const std::string pid = std::to_string(::getpid());
  std::vector<std::string> told;

  SECTION("serving a mount point its process still has: refused without waiting") {
    REQUIRE(old->set_state(std::string(kStateServing) + " /").is_ok());  // / is always mounted
    const auto start = std::chrono::steady_clock::now();
    auto refused = lock_cache_dir(dir, daemon_waiting(10s, told));
    REQUIRE_FALSE(refused.is_ok());
    CHECK(std::chrono::steady_clock::now() - start < 2s);
    CHECK_THAT(refused.status().message(),
               Catch::Contains("is in use by another flashdir daemon (pid " + pid + ", serving /); unmount it first"));
    CHECK(told.empty());
  }
  for (const std::string& state : {std::string(kStateClosing), std::string(kStateServing) + " /no/such/mount"}) {
    SECTION("\"" + state + "\": waited for until it lets go") {
      REQUIRE(old->set_state(state).is_ok());
      std::thread closer([&old] {
        std::this_thread::sleep_for(300ms);
        old = Status::io_error("closed");
      });
      auto taken = lock_cache_dir(dir, daemon_waiting(10s, told));
      closer.join();
      INFO(taken.status().message());
      REQUIRE(taken.is_ok());
      REQUIRE(told.size() == 1);
      CHECK_THAT(told[0], Catch::Contains("waiting up to 10 s for another flashdir daemon (pid " + pid + ", " + state +
                                          ") to finish closing cache"));
      CHECK(lock_line(tmp) == pid + " flashdir starting\n");
    }
  }
  SECTION("a closing daemon that does not let go is refused after the wait") {
    REQUIRE(old->set_state(kStateClosing).is_ok());
    auto refused = lock_cache_dir(dir, daemon_waiting(200ms, told));
    REQUIRE_FALSE(refused.is_ok());
    CHECK_THAT(refused.status().message(), Catch::Contains("is still in use by another flashdir daemon (pid " + pid +
                                                           ", closing) after waiting 0.2 s for it to close"));
    CHECK(told.size() == 1);
  }
  SECTION("mkfs and fsck do not wait") {
    REQUIRE(old->set_state(kStateClosing).is_ok());
    auto refused = lock_cache_dir(dir, request("mkfs.flashdir", "formatting"));
    REQUIRE_FALSE(refused.is_ok());
    CHECK_THAT(refused.status().message(), Catch::Contains("closing); unmount it first"));
  }
}

TEST_CASE("a link planted as the lock file is refused, not followed", "[lock]") {
  TempDir tmp;
  const TrustedDir dir = cache_dir(tmp);
  std::ofstream(tmp / "victim") << "root only";
  fs::create_symlink(tmp / "victim", tmp / "cache" / kLockFileName);
  auto refused = lock_cache_dir(dir, request(kDaemonProgram, "starting"));
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("daemon.lock is a symbolic link"));
  CHECK(fs::file_size(tmp / "victim") == 9);
}
