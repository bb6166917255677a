#include "cut_sweep.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "ftl/layout.h"
#include "durability_check.h"

namespace flashdir::testing {
namespace {

// FLASHDIR_TEST_RUN numbers: variant * kRunsPerVariant + operation * 2 + (dropped ? 1 : 0).
constexpr std::uint64_t kRunsPerVariant = 1'000'000;

struct Played {
  Oracle oracle{0};
  std::uint64_t durable = 0;
  bool power_lost = false;
  std::map<std::string, std::uint64_t> marks;
};

// Formats an FTL on `chip` and runs the scenario to its end or to the power cut.
Played play(const Scenario& scenario, ChipOpLog& chip, SimClock& clock, const FtlOptions& options, std::uint64_t seed) {
  auto ftl = Ftl::format(chip, clock, options);
  REQUIRE_OK(ftl);
  Played played;
  played.oracle = Oracle((*ftl)->logical_pages());
  Host host(**ftl, played.oracle);
  SeededRandom random(seed);
  ScenarioRun run{host, chip, random, {}};
  scenario(run);
  played.durable = host.durable();
  played.power_lost = host.power_lost();
  played.marks = std::move(run.marks);
  return played;
}

// Whether the first `count` operations of two runs did the same thing to the same place.
bool same_ops(const std::vector<ChipOp>& a, const std::vector<ChipOp>& b, std::uint64_t count) {
  if (a.size() < count || b.size() < count) return false;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (a[i].kind != b[i].kind || a[i].page != b[i].page) return false;
  }
  return true;
}

}  // namespace

std::uint64_t Recording::at(const std::string& mark) const {
  const auto it = marks.find(mark);
  INFO("the scenario never reached the mark '" << mark << "'");
  REQUIRE(it != marks.end());
  return it->second;
}

CutSweep::CutSweep(SweepOptions options, Scenario scenario, std::uint64_t default_seed)
    : options_(std::move(options)), scenario_(std::move(scenario)), runs_(default_seed) {
  auto layout = ftl::FtlLayout::compute(options_.geometry, options_.ftl.overprovision_permille);
  REQUIRE_OK(layout);
  pool_first_block_ = layout->pool_first_block;
  TestChip chip(Backend::memory, options_.geometry);
  ChipOpLog log(chip.chip(), pool_first_block_);
  INFO("the scenario without a power cut, seed " << runs_.seed(0));
  const Played played = play(scenario_, log, chip.clock(), options_.ftl, runs_.seed(0));
  REQUIRE_FALSE(played.power_lost);
  recording_.ops = log.ops();
  recording_.marks = played.marks;
}

void CutSweep::cut_at(const std::vector<std::uint64_t>& ops, const CutCheck& check) {
  INFO("no operation to cut at: the scenario missed its aim");
  REQUIRE_FALSE(ops.empty());
  for (const std::uint64_t op : ops) {
    for (const InFlight in_flight : {InFlight::torn, InFlight::dropped}) {
      // A read in flight changes nothing on the chip: torn or dropped, the cut is the same.
      if (recording_.ops[op].kind == OpKind::read && in_flight == InFlight::dropped) continue;
      const std::uint64_t run = options_.variant * kRunsPerVariant + op * 2 + (in_flight == InFlight::dropped ? 1 : 0);
      if (!runs_.selected(run)) continue;
      cut_once(op, in_flight, run, check);
    }
  }
}

void CutSweep::cut_once(std::uint64_t op, InFlight in_flight, std::uint64_t run, const CutCheck& check) {
  REQUIRE(op < recording_.ops.size());
  const ChipOp& what = recording_.ops[op];
  INFO(fmt::format("power cut at operation {} ({} of page {}, block {}), {}\nreplay: {}", op, op_kind_name(what.kind),
                   what.page.value, what.block.value, in_flight == InFlight::torn ? "torn" : "dropped",
                   runs_.replay_command(run)));
  FaultPlan plan;
  plan.seed = runs_.seed(run);
  plan.cut_at_operation = op;
  plan.in_flight = in_flight;
  TestChip chip(Backend::memory, options_.geometry);
  FaultyChip faulty(chip.chip(), plan);
  ChipOpLog log(faulty, pool_first_block_);
  Played played = play(scenario_, log, chip.clock(), options_.ftl, runs_.seed(0));
  INFO(faulty.cut().describe());
  REQUIRE(played.power_lost);
  REQUIRE(same_ops(log.ops(), recording_.ops, op + 1));  // the scenario is deterministic
  chip.reopen();

  REQUIRE(fsck_errors(chip.chip(), options_.ftl) == "");
  auto reopened = Ftl::open(chip.chip(), chip.clock(), options_.ftl);
  REQUIRE_OK(reopened);
  REQUIRE(fsck_errors(chip.chip(), options_.ftl) == "");  // the recovery's checkpoint describes the chip exactly
  REQUIRE((*reopened)->recovery().dangling_mappings == 0);
  REQUIRE((*reopened)->recovery().shared_pages == 0);
  REQUIRE((*reopened)->lost_lpns().empty());  // lost before this cut or by it (reads would fail too)
  REQUIRE(verify_and_settle(**reopened, played.oracle, played.durable) == "");
  if (check) check(CutOutcome{op, what, faulty.cut(), **reopened, recording_});

  // The FTL goes on: a quarter of the logical space rewritten makes GC collect what the cut left.
  std::uint64_t durable = 0;
  {
    Host host(**reopened, played.oracle);
    SeededRandom random(plan.seed);
    const std::uint64_t L = played.oracle.size();
    for (std::uint64_t written = 0; written < L / 4;) {
      const auto count = static_cast<std::uint32_t>(random.between(1, 8));
      host.write(random.uniform(L - count + 1), count);
      written += count;
    }
    host.flush();
    REQUIRE_FALSE(host.power_lost());
    durable = host.durable();
    REQUIRE_OK((*reopened)->close());
  }
  reopened = Ftl::open(chip.chip(), chip.clock(), options_.ftl);
  REQUIRE_OK(reopened);
  REQUIRE((*reopened)->recovery().clean);
  REQUIRE(verify_and_settle(**reopened, played.oracle, durable) == "");
}

}  // namespace flashdir::testing
