// Power cuts aimed at checkpoints and roll-forward, where FTLs usually break (DESIGN.md, "ftl —
// logical pages"): roll-forward must find the pages of every frontier, translation pages and
// data pages written after a checkpoint interleave, and a checkpoint can be torn. Each
// scenario steers the FTL into the situation; the power is then cut at every chip operation of
// the step, torn and dropped (cut_sweep.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "scenario_steps.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// After a checkpoint, host pages classified hot and cold, GC copies and translation pages.
void write_every_frontier(ScenarioRun& run) {
  age(run, 12);
  flush_with_checkpoint(run);
  run.mark("checkpoint");
  const std::uint64_t L = run.host.ftl().logical_pages();
  for (int i = 0; i < 3; ++i) {
    run.host.write(run.random.uniform(L - 3), 3, WriteHint::hot);
    run.host.write(run.random.uniform(L - 3), 3, WriteHint::cold);
  }
  const std::uint64_t checkpoint = run.marks["checkpoint"];
  while (!run.host.power_lost() && (count_kind(ops_since(run, checkpoint), OpKind::gc_copy) == 0 ||
                                    count_kind(ops_since(run, checkpoint), OpKind::translation) == 0)) {
    random_writes(run, 8);
  }
  run.host.flush();
  run.host.read(0, 1);
  run.mark("end");
}

// The LPNs of translation page 0 get data pages, then the translation page, then newer data
// pages, a trim only the next translation page records, buffered pages that reach flash just
// before it, and so on.
void interleave_translation_and_data(ScenarioRun& run) {
  age(run, 12);
  flush_with_checkpoint(run);
  run.mark("checkpoint");
  Host& host = run.host;
  host.write(10, kBypassPages);  // data pages
  host.flush();                  // translation page 0 after them
  host.write(12, kBypassPages);  // data pages after it
  host.trim(40, 4);              // only in a dirty entry
  host.write(14, 2);             // buffered
  host.flush();                  // the buffered pages, then translation page 0 with the trim
  host.write(41, kBypassPages);  // data after it again
  host.trim(12, 1);
  host.write(60, 3);
  host.flush();
  host.read(10, 1);
  run.mark("end");
}

// A checkpoint, writes, and a second checkpoint.
void write_two_checkpoints(ScenarioRun& run) {
  age(run, 12);
  flush_with_checkpoint(run);
  random_writes(run, 500);
  run.mark("second checkpoint");
  flush_with_checkpoint(run);
  run.mark("second checkpoint done");
  run.host.read(0, 1);
  run.mark("end");
}

}  // namespace

TEST_CASE("power cuts after a checkpoint: roll-forward finds the writes of every frontier",
          "[ftl][powercut][pitfall]") {
  // The hot and cold frontiers go on filling blocks the checkpoint saw partly written: the
  // chip programs a block in order, so recovery must find where each left off.
  CutSweep sweep(aimed_sweep_options(format::MappingScheme::cftl, 0), write_every_frontier, 6000);
  const Recording& r = sweep.recording();
  const std::uint64_t checkpoint = r.at("checkpoint");
  const std::span<const ChipOp> after = ops_between(r, checkpoint, r.at("end"));
  for (const OpKind kind : {OpKind::hot_data, OpKind::cold_data, OpKind::gc_copy, OpKind::translation}) {
    INFO(op_kind_name(kind) << " pages after the checkpoint");
    CHECK(count_kind(after, kind) > 0);
  }
  CHECK(count_kind(after, OpKind::checkpoint) == 0);
  std::set<std::uint64_t> partly_written;  // blocks holding host data at the checkpoint
  for (const ChipOp& op : ops_between(r, 0, checkpoint)) {
    if (op.kind == OpKind::pool_erase) partly_written.erase(op.block.value);
    if (is_host_data(op.kind)) partly_written.insert(op.block.value);
  }
  CHECK(std::any_of(after.begin(), after.end(), [&](const ChipOp& op) {
    return is_host_data(op.kind) && partly_written.count(op.block.value) != 0;
  }));
  sweep.cut_at(every_op(checkpoint, r.at("end")));
}

TEST_CASE("power cuts among translation pages and data pages written after a checkpoint", "[ftl][powercut][pitfall]") {
  // Whichever came last, recovery must end at the newest durable state of every LPN.
  for (const auto mapping : kMappingSchemes) {
    INFO(format::mapping_scheme_name(mapping));
    CutSweep sweep(aimed_sweep_options(mapping, static_cast<std::uint64_t>(mapping)), interleave_translation_and_data,
                   7000);
    const Recording& r = sweep.recording();
    int alternations = 0;  // between translation page 0 and data pages of its LPNs
    bool last_was_translation = true;
    for (const ChipOp& op : ops_between(r, r.at("checkpoint"), r.at("end"))) {
      const bool translation = op.kind == OpKind::translation && op.logical == 0;
      const bool data = is_host_data(op.kind) && op.logical < 128;
      if ((translation || data) && translation != last_was_translation) {
        ++alternations;
        last_was_translation = translation;
      }
    }
    CHECK(alternations >= 5);
    sweep.cut_at(every_op(r.at("checkpoint"), r.at("end")));
  }
}

TEST_CASE("power cuts at every operation of a checkpoint: a torn one falls back to the older slot",
          "[ftl][powercut][pitfall]") {
  CutSweep sweep(aimed_sweep_options(format::MappingScheme::cftl, 0), write_two_checkpoints, 8000);
  const Recording& r = sweep.recording();
  const std::uint64_t start = r.at("second checkpoint");
  const std::uint64_t done = r.at("second checkpoint done");
  std::uint64_t older = 0, newer = 0;  // generations
  for (std::uint64_t op = 0; op < done; ++op) {
    if (r.ops[op].kind == OpKind::checkpoint) (op < start ? older : newer) = r.ops[op].logical;
  }
  REQUIRE(newer == older + 1);
  REQUIRE(count_kind(ops_between(r, start, done), OpKind::checkpoint) >= 2);
  sweep.cut_at(every_op(start, r.at("end")), [&](const CutOutcome& outcome) {
    const bool writing_it = outcome.what.kind == OpKind::checkpoint || outcome.what.kind == OpKind::slot_erase;
    if (writing_it) CHECK(outcome.reopened.recovery().checkpoint_generation == older);
    if (outcome.op >= done) CHECK(outcome.reopened.recovery().checkpoint_generation == newer);
  });
}
