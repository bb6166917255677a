// Power cuts aimed at garbage collection, where FTLs usually break (DESIGN.md, "ftl — logical
// pages"): a copy must keep the version of what it moves, a victim must be erased only after
// its copies are programmed, and an erase cut short must leave a block recovery can live with.
// Each scenario steers the FTL into the situation; the power is then cut at every chip
// operation of the step, torn and dropped (cut_sweep.h).
#include <catch2/catch.hpp>

#include <algorithm>

#include "ftl/ftl_core.h"
#include "scenario_steps.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

// The LPNs whose current version lives in `block`, from what the chip was programmed with.
std::vector<std::uint64_t> live_lpns(ScenarioRun& run, BlockNumber block) {
  const ftl::FtlCore& core = run.host.ftl().core();
  const Geometry& g = core.layout().geometry;
  std::vector<std::uint64_t> lpns;
  for (std::uint32_t i = 0; i < g.pages_per_block; ++i) {
    const ChipOp* program = run.ops.holding(g.page_at(block, i));
    if (core.blocks().is_valid(g.page_at(block, i)) && program != nullptr && is_host_data(program->kind)) {
      lpns.push_back(program->logical);
    }
  }
  return lpns;
}

// Whether, among `ops`, GC copied the old version of an LPN of [first, first + count) that a
// host page of `version` then replaced, and no translation page recorded that after.
bool copied_then_replaced(std::span<const ChipOp> ops, std::uint64_t first, std::uint32_t count, std::uint64_t version,
                          const ftl::FtlLayout& layout) {
  for (auto copy = ops.begin(); copy != ops.end(); ++copy) {
    if (copy->kind != OpKind::gc_copy || copy->logical < first || copy->logical >= first + count) continue;
    const auto replaced = std::find_if(copy, ops.end(), [&](const ChipOp& op) {
      return is_host_data(op.kind) && op.logical == copy->logical && op.version == version;
    });
    const std::uint64_t tpn = layout.tpn_of(Lpn(copy->logical));
    const auto recorded = std::find_if(
        replaced, ops.end(), [&](const ChipOp& op) { return op.kind == OpKind::translation && op.logical == tpn; });
    if (replaced != ops.end() && recorded == ops.end()) return true;
  }
  return false;
}

// GC makes room for a write that bypasses the RAM buffer after the write has its version, so
// it may relocate the old version of a page the write then replaces: the copy is programmed
// after the newer version was handed out. Aimed: such a write over an LPN of the next victim.
void relocate_what_a_write_replaces(ScenarioRun& run) {
  age(run, 12);
  Ftl& ftl = run.host.ftl();
  const std::uint64_t L = ftl.logical_pages();
  std::uint64_t first = 0;
  auto write_over_victim = [&] {
    const std::optional<BlockNumber> victim = ftl.core().gc_policy().select_victim(0);
    const std::vector<std::uint64_t> live = victim ? live_lpns(run, *victim) : std::vector<std::uint64_t>();
    first = live.empty() ? run.random.uniform(L - kBypassPages + 1)
                         : std::min(live[run.random.uniform(live.size())], L - kBypassPages);
    run.host.write(first, kBypassPages);
  };
  repeat_until(run, "aimed write", write_over_victim, [&](std::span<const ChipOp> ops) {
    // A short request keeps the sweep short; a GC run of many victims is no better aim.
    return ops.size() <= 100 &&
           copied_then_replaced(ops, first, kBypassPages, run.host.last_version(), ftl.core().layout());
  });
  run.host.read(first, 1);  // cut here, the new version is on flash in a data page only
  run.mark("end");
}

// A write whose GC collects a victim holding `held` and moves at least two of its pages.
void collect_a_victim_holding(ScenarioRun& run, OpKind held) {
  age(run, 12);
  const std::uint64_t L = run.host.ftl().logical_pages();
  auto write = [&] {
    const auto count = static_cast<std::uint32_t>(run.random.between(1, kBypassPages));
    run.host.write(run.random.uniform(L - count + 1), count);
  };
  const OpKind moved = held == OpKind::translation ? OpKind::translation : OpKind::gc_copy;
  repeat_until(run, "GC run", write, [&](std::span<const ChipOp> ops) {
    const bool erased = std::any_of(ops.begin(), ops.end(), [&](const ChipOp& op) {
      return op.kind == OpKind::pool_erase &&
             (held == OpKind::translation ? op.erased_block_held == held : is_host_data(op.erased_block_held));
    });
    return erased && count_kind(ops, moved) >= 2;
  });
}

// GC erases and a checkpoint slot erase, between two checkpoints.
void erase_blocks(ScenarioRun& run) {
  age(run, 12);
  flush_with_checkpoint(run);
  run.mark("start");
  random_writes(run, 200);
  flush_with_checkpoint(run);
  run.mark("end");
}

}  // namespace

TEST_CASE("power cuts around a GC copy of a version a newer durable write replaces: the newer wins",
          "[ftl][powercut][pitfall]") {
  // Were the copy given a fresh number, it would beat the newer write at recovery.
  for (const auto mapping : kMappingSchemes) {
    INFO(format::mapping_scheme_name(mapping));
    CutSweep sweep(aimed_sweep_options(mapping, static_cast<std::uint64_t>(mapping)), relocate_what_a_write_replaces,
                   4000);
    const Recording& r = sweep.recording();
    sweep.cut_at(every_op(r.at("aimed write"), r.at("end")));
  }
}

TEST_CASE("power cuts at every operation of a GC run: a victim is erased only after its copies",
          "[ftl][powercut][pitfall]") {
  // Each cut between reading the victim and erasing it must leave every durable page findable.
  for (const OpKind held : {OpKind::cold_data, OpKind::translation}) {
    INFO("a victim holding " << op_kind_name(held));
    CutSweep sweep(
        aimed_sweep_options(format::MappingScheme::cftl, static_cast<std::uint64_t>(held)),
        [held](ScenarioRun& run) { collect_a_victim_holding(run, held); }, 5000);
    const Recording& r = sweep.recording();
    sweep.cut_at(every_op(r.at("GC run"), r.at("GC run done")));
  }
}

TEST_CASE("power cuts during erases: a half-erased block is skipped, then collected again",
          "[ftl][powercut][pitfall]") {
  // A torn erase leaves a block that is neither erased nor intact (FaultyChip: garbage pages at
  // its start).
  CutSweep sweep(aimed_sweep_options(format::MappingScheme::cftl, 0), erase_blocks, 9000);
  const Recording& r = sweep.recording();
  std::vector<std::uint64_t> erases;
  for (const std::uint64_t op : every_op(r.at("start"), r.at("end"))) {
    if (r.ops[op].kind == OpKind::pool_erase || r.ops[op].kind == OpKind::slot_erase) erases.push_back(op);
  }
  const auto slot_erases = std::count_if(erases.begin(), erases.end(),
                                         [&](std::uint64_t op) { return r.ops[op].kind == OpKind::slot_erase; });
  CHECK(slot_erases >= 1);
  CHECK(erases.size() - static_cast<std::size_t>(slot_erases) >= 3);
  sweep.cut_at(erases, [](const CutOutcome& outcome) {
    // The garbage a torn GC erase leaves is seen and skipped.
    if (outcome.cut.torn && outcome.what.kind == OpKind::pool_erase) {
      CHECK(outcome.reopened.recovery().damaged_pages > 0);
    }
  });
}
