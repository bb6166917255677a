// The image backend killed as a process (issue 8): a forked child runs a seeded workload on an
// FTL over an image file and the parent SIGKILLs it at a random point, then reopens the image
// and checks every LPN against the durability contract. Unlike FaultyChip's cuts, nothing here
// is simulated: the kill lands between (or inside) the image store's real writes, and the file
// keeps whatever reached the kernel, so this checks the image store's write order (block table
// before pages) as much as the FTL.
//
// The child tells the parent, through a pipe, each request before it starts it and the durable
// watermark after it returns; fixed-size records under PIPE_BUF arrive whole or not at all, so
// the parent's oracle knows, at the kill, what was acknowledged and what was in flight.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

#include "durability_check.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "ftl_harness.h"
#include "scenario_steps.h"
#include "support/seed.h"
#include "support/temp_dir.h"
#include "workload_driver.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// One message from the child. `started` precedes the request; `done` follows it.
struct Record {
  enum Kind : std::uint32_t { started_write, started_trim, started_flush, done, failed } kind;
  std::uint32_t count = 0;
  std::uint64_t first = 0;
  std::uint64_t version = 0;  // of a write
  std::uint64_t durable = 0;  // of `done`: the durable watermark after the request
  char error[96] = {};        // of `failed`
};
static_assert(sizeof(Record) <= PIPE_BUF, "a record must reach the pipe whole");

void send(int fd, const Record& record) {
  // A short write cannot happen below PIPE_BUF; a failed one means the parent is gone.
  if (::write(fd, &record, sizeof record) != static_cast<ssize_t>(sizeof record)) ::_exit(3);
}

[[noreturn]] void fail(int fd, const std::string& what) {
  Record record{Record::failed};
  std::snprintf(record.error, sizeof record.error, "%s", what.c_str());
  send(fd, record);
  ::_exit(2);
}

// The child: opens the image (recovering from the previous kill), then writes, trims, flushes
// and reads at random until it is killed. Reads are checked against its copy of the oracle,
// inherited from the parent at the fork. It never returns: Catch must not run in two processes.
[[noreturn]] void run_child(const std::filesystem::path& image, const FtlOptions& options, Oracle oracle,
                            std::uint64_t seed, int fd) {
  auto store = open_image_store(image, ImageAccess::read_write);
  if (!store.is_ok()) fail(fd, store.status().to_string());
  SimClock clock;
  SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  auto ftl = Ftl::open(chip, clock, options);
  if (!ftl.is_ok()) fail(fd, ftl.status().to_string());
  const Geometry& g = chip.geometry();
  const std::uint64_t logical_pages = (*ftl)->logical_pages();
  SeededRandom random(seed);
  std::vector<std::uint8_t> buffer;
  std::uint64_t version = (*ftl)->durable_seq();  // of the last write, as Host counts them
  for (;;) {
    const std::uint64_t choice = random.uniform(100);
    const auto count = static_cast<std::uint32_t>(random.between(1, 6));
    const std::uint64_t lpn = random.uniform(logical_pages - count + 1);
    if (choice < 70) {
      const Record started{Record::started_write, count, lpn, version + 1};
      send(fd, started);
      auto written = (*ftl)->write(Lpn(lpn), count, run_data(g, lpn, count, started.version));
      if (!written.is_ok()) fail(fd, written.status().to_string());
      if (*written != started.version) fail(fd, fmt::format("write got version {}, not {}", *written, started.version));
      version = *written;
      oracle.wrote(lpn, count, version);
    } else if (choice < 85) {
      buffer.resize(std::size_t{count} * g.page_size_bytes);
      if (Status s = (*ftl)->read(Lpn(lpn), count, buffer); !s.is_ok()) fail(fd, s.to_string());
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint64_t read = version_of(lpn + i, ConstByteSpan(buffer).subspan(std::size_t{i} * g.page_size_bytes,
                                                                                       g.page_size_bytes));
        if (read != oracle.expected(lpn + i)) {
          fail(fd, fmt::format("LPN {} reads version {}: {}", lpn + i, read, oracle.describe(lpn + i)));
        }
      }
      continue;  // nothing the parent needs to know
    } else if (choice < 95) {
      send(fd, Record{Record::started_trim, count, lpn});
      if (Status s = (*ftl)->trim(Lpn(lpn), count); !s.is_ok()) fail(fd, s.to_string());
      oracle.trimmed(lpn, count);
    } else {
      send(fd, Record{Record::started_flush});
      if (Status s = (*ftl)->flush(); !s.is_ok()) fail(fd, s.to_string());
      oracle.flushed();
    }
    send(fd, Record{Record::done, 0, 0, 0, (*ftl)->durable_seq()});
  }
}

// The parent's view of one child: applies its records to the oracle as they come.
class ChildLog {
 public:
  explicit ChildLog(Oracle& oracle) : oracle_(oracle) {}

  void apply(const Record& record) {
    switch (record.kind) {
      case Record::started_write:
      case Record::started_trim:
      case Record::started_flush: pending_ = record; break;
      case Record::done:
        REQUIRE(pending_.has_value());
        if (pending_->kind == Record::started_write) oracle_.wrote(pending_->first, pending_->count, pending_->version);
        if (pending_->kind == Record::started_trim) oracle_.trimmed(pending_->first, pending_->count);
        if (pending_->kind == Record::started_flush) oracle_.flushed();
        pending_.reset();
        durable_ = record.durable;
        ++requests_;
        break;
      case Record::failed: FAIL("the child failed: " << std::string(record.error, strnlen(record.error, sizeof record.error)));
    }
  }
  // After the kill: the request started and not acknowledged was in flight.
  void killed() {
    if (!pending_) return;
    if (pending_->kind == Record::started_write) oracle_.in_flight_write(pending_->first, pending_->count, pending_->version);
    if (pending_->kind == Record::started_trim) oracle_.in_flight_trim(pending_->first, pending_->count);
    pending_.reset();
  }
  std::uint64_t requests() const { return requests_; }
  std::optional<std::uint64_t> durable() const { return durable_; }

 private:
  Oracle& oracle_;
  std::optional<Record> pending_;
  std::optional<std::uint64_t> durable_;  // none if no request returned
  std::uint64_t requests_ = 0;
};

// Reads one record; false at end of file (every writer gone).
bool receive(int fd, Record& record) {
  auto* bytes = reinterpret_cast<char*>(&record);
  std::size_t got = 0;
  while (got < sizeof record) {
    const ssize_t n = ::read(fd, bytes + got, sizeof record - got);
    if (n < 0 && errno == EINTR) continue;
    REQUIRE(n >= 0);
    if (n == 0) {
      REQUIRE(got == 0);  // records are written whole
      return false;
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

struct KillStats {
  int kills = 0;
  int before_first_request = 0;  // the kill landed in open (recovery) or the first request
  std::uint64_t requests = 0;
};

// One round: fork a child on the image, kill it after `after_requests` acknowledged requests
// or after `delay_us` microseconds, whichever the round uses, and drain what it reported.
void kill_round(const std::filesystem::path& image, const FtlOptions& options, Oracle& oracle, std::uint64_t& durable,
                SeededRandom& random, KillStats& stats) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::uint64_t child_seed = random.next_u64();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    run_child(image, options, oracle, child_seed, fds[1]);
  }
  ::close(fds[1]);
  ChildLog log(oracle);
  Record record{};
  if (random.one_in(2)) {
    const std::uint64_t after_requests = random.uniform(300);
    INFO("kill after " << after_requests << " requests");
    while (log.requests() < after_requests && receive(fds[0], record)) log.apply(record);
  } else {
    const std::uint64_t delay_us = random.uniform(20000);
    INFO("kill after " << delay_us << " us");
    const timespec delay{0, static_cast<long>(delay_us * 1000)};
    ::nanosleep(&delay, nullptr);
  }
  REQUIRE(::kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  while (receive(fds[0], record)) log.apply(record);
  ::close(fds[0]);
  INFO("child status " << status);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  log.killed();
  ++stats.kills;
  stats.requests += log.requests();
  if (log.requests() == 0) ++stats.before_first_request;
  if (log.durable()) durable = *log.durable();
}

// Reopens the image after a kill: fsck finds nothing wrong, recovery reports nothing lost,
// dangling or shared, and every LPN reads a value the contract allows.
void check_after_kill(const std::filesystem::path& image, const FtlOptions& options, Oracle& oracle,
                      std::uint64_t durable) {
  auto store = open_image_store(image, ImageAccess::read_write);
  REQUIRE_OK(store);
  SimClock clock;
  SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  REQUIRE(fsck_errors(chip, options) == "");
  auto ftl = Ftl::open(chip, clock, options);
  REQUIRE_OK(ftl);
  const RecoveryReport& recovery = (*ftl)->recovery();
  CHECK(recovery.dangling_mappings == 0);
  CHECK(recovery.shared_pages == 0);
  CHECK(recovery.lost_lpns == 0);
  REQUIRE((*ftl)->durable_seq() >= durable);
  REQUIRE(verify_and_settle(**ftl, oracle, durable) == "");
}

}  // namespace

TEST_CASE("an FTL on an image survives SIGKILL of its process at random points", "[ftl][powercut][kill]") {
  const SeededRuns runs(7000);
  const std::uint64_t rounds = test_knob("FLASHDIR_KILL_ROUNDS", 8);
  KillStats stats;
  std::uint64_t run = 0;
  for (auto mapping : kMappingSchemes) {
    const std::uint64_t this_run = run++;
    if (!runs.selected(this_run)) continue;
    const std::uint64_t seed = runs.seed(this_run);
    INFO(fmt::format("{}, seed {}, {} rounds\nreplay: FLASHDIR_KILL_ROUNDS={} {}", format::mapping_scheme_name(mapping),
                     seed, rounds, rounds, runs.replay_command(this_run)));
    FtlOptions options = small_cache_options(mapping, format::GcPolicy::dual_greedy);
    options.checkpoint_interval_pages = 40;  // checkpoints often: kills land in them too
    TempDir dir;
    const std::filesystem::path image = dir / "nand.img";
    std::uint64_t logical_pages = 0;
    {
      auto store = create_image_store(image, small_ftl_geometry(), format::Uuid::random());
      REQUIRE_OK(store);
      SimClock clock;
      SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
      auto ftl = Ftl::format(chip, clock, options);
      REQUIRE_OK(ftl);
      logical_pages = (*ftl)->logical_pages();
      REQUIRE_OK((*ftl)->close());
    }
    Oracle oracle(logical_pages);
    std::uint64_t durable = 0;
    SeededRandom random(seed);
    for (std::uint64_t round = 0; round < rounds; ++round) {
      INFO("round " << round);
      kill_round(image, options, oracle, durable, random, stats);
      check_after_kill(image, options, oracle, durable);
    }
  }
  fmt::print("{} kills ({} before the first request returned), {} requests acknowledged\n", stats.kills,
             stats.before_first_request, stats.requests);
}
