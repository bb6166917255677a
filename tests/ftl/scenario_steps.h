// Steps that the scenarios of aimed power cuts (cut_sweep.h) share: an aged device, random
// writes, a flush that writes a checkpoint, a request repeated until it does what a test aims
// at, and ways to look at what the chip operations did.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "cut_sweep.h"

namespace flashdir::testing {

inline constexpr format::MappingScheme kMappingSchemes[] = {format::MappingScheme::cftl, format::MappingScheme::dftl,
                                                            format::MappingScheme::page};

// Longer than half a 16-page block: such a write skips the RAM buffer, so GC makes room for
// it after it has its version and before its pages are programmed.
inline constexpr std::uint32_t kBypassPages = 9;

// The small chip with a four-page device RAM, whose evictions write translation pages all the
// time. Checkpoints come at the first flush after aging, not again within a short stretch.
SweepOptions aimed_sweep_options(format::MappingScheme mapping, std::uint64_t variant);

// Fills the logical space, then overwrites random runs until GC has collected `victims` blocks.
void age(ScenarioRun& run, std::uint64_t victims);
// Random runs of 1 to 8 pages, `pages` pages in all.
void random_writes(ScenarioRun& run, std::uint64_t pages);
// Flushes (with random writes between) until a flush writes a checkpoint.
void flush_with_checkpoint(ScenarioRun& run);
// Calls `request` until the chip operations of one call satisfy `landed`; marks that call's
// first operation as `name` and the one after its last as `name + " done"`.
void repeat_until(ScenarioRun& run, const std::string& name, const std::function<void()>& request,
                  const std::function<bool(std::span<const ChipOp>)>& landed);

std::span<const ChipOp> ops_since(const ScenarioRun& run, std::uint64_t first);
std::span<const ChipOp> ops_between(const Recording& recording, std::uint64_t first, std::uint64_t end);
std::uint64_t count_kind(std::span<const ChipOp> ops, OpKind kind);
// Every operation index in [first, end).
std::vector<std::uint64_t> every_op(std::uint64_t first, std::uint64_t end);

}  // namespace flashdir::testing
