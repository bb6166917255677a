// Power cuts aimed at every chip operation of a stretch of a scenario, for tests that target
// one step of the persistence protocol (doc/ftl.md, "Testing recovery").
//
// The scenario runs once on a fresh FTL without a cut while a ChipOpLog records what each
// chip operation was about; the test picks the operations of the step it aims at. For each,
// the scenario runs again from scratch with the power cut at that operation (torn, then
// dropped), and the chip is reopened and checked: fsck's FTL check finds nothing wrong,
// recovery maps no LPN into an erased page or a page another maps, every LPN reads a value the
// durability contract allows, and the FTL goes on working (writes enough to make GC collect
// what the cut left, closes, reopens, and reads back exactly what it wrote).
//
// A scenario must be deterministic given its random source: the runs repeat the recorded one
// operation for operation up to the cut.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "chip_op_log.h"
#include "flashdir/nand/faulty_chip.h"
#include "flashdir/random.h"
#include "ftl_harness.h"
#include "host.h"
#include "support/seed.h"

namespace flashdir::testing {

struct ScenarioRun {
  Host& host;
  const ChipOpLog& ops;
  SeededRandom& random;
  std::map<std::string, std::uint64_t> marks;

  // The scenario got here: remembers the number of chip operations so far (the last time).
  void mark(const std::string& name) { marks[name] = ops.count(); }
};
using Scenario = std::function<void(ScenarioRun&)>;

struct Recording {
  std::vector<ChipOp> ops;
  std::map<std::string, std::uint64_t> marks;

  // The operation count at a mark; fails the test if the scenario never got there.
  std::uint64_t at(const std::string& mark) const;
};

// What a test's own check after one cut gets, besides the checks every cut gets.
struct CutOutcome {
  std::uint64_t op;  // the index of the operation in flight
  const ChipOp& what;
  const CutReport& cut;
  Ftl& reopened;
  const Recording& recording;
};
using CutCheck = std::function<void(const CutOutcome&)>;

struct SweepOptions {
  Geometry geometry = small_ftl_geometry();
  FtlOptions ftl;
  // Numbers the sweeps of one test case, so that each cut has its own FLASHDIR_TEST_RUN.
  std::uint64_t variant = 0;
};

class CutSweep {
 public:
  // Records `scenario`, seeded with FLASHDIR_TEST_SEED or `default_seed`.
  CutSweep(SweepOptions options, Scenario scenario, std::uint64_t default_seed);

  const Recording& recording() const { return recording_; }
  // Cuts at each of `ops` (indices into the recording; there must be some), torn and dropped
  // (once for a read: the chip is the same either way), or only at the one FLASHDIR_TEST_RUN
  // picks.
  void cut_at(const std::vector<std::uint64_t>& ops, const CutCheck& check = nullptr);

 private:
  void cut_once(std::uint64_t op, InFlight in_flight, std::uint64_t run, const CutCheck& check);

  SweepOptions options_;
  Scenario scenario_;
  SeededRuns runs_;
  std::uint64_t pool_first_block_;
  Recording recording_;
};

}  // namespace flashdir::testing
