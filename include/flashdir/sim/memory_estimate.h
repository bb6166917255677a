// How much memory a flashdir-sim run needs, estimated before anything is built, so that a
// configuration that would exhaust the machine (a sparse trace sizing a multi-terabyte chip)
// is refused with a message instead of swapping or being killed.
//
// The estimate assumes every block of the chip holds programmed pages at some point: the chip
// stores keep a block's OOB records (and its data, where kept) from its first program to its
// erase, and GC rotates through every block of a used device. Per physical page it counts the
// OOB record and the FTL's and store's bookkeeping (measured, doc/sim.md "Memory"), plus the
// page data for the memory backend; per logical page the torture mode's oracle; plus the
// device RAM budget and the compacted traces. Runs of a comparison are sequential, so a plan
// needs its compacted traces plus its largest run.
#pragma once

#include <cstdint>
#include <string>

#include "flashdir/geometry.h"
#include "flashdir/sim/config.h"
#include "flashdir/sim/compaction.h"
#include "flashdir/sim/simulation.h"
#include "flashdir/status.h"

namespace flashdir::sim {

struct MemoryEstimate {
  std::uint64_t chip_bytes = 0;    // page stores: OOB, data, block state
  std::uint64_t ftl_bytes = 0;     // FTL bookkeeping per page and block, device RAM structures
  std::uint64_t oracle_bytes = 0;  // torture mode's oracle
  std::uint64_t fixed_bytes = 0;   // the process itself

  std::uint64_t total() const { return chip_bytes + ftl_bytes + oracle_bytes + fixed_bytes; }
};

// Measured (doc/sim.md): bytes of FTL and store bookkeeping per physical page beyond its OOB
// record on the metadata backend (translation pages kept with data included), and on the
// memory backend beyond page and OOB.
inline constexpr std::uint64_t kMetadataBytesPerPage = 128;
inline constexpr std::uint64_t kMemoryBytesPerPage = 64;
inline constexpr std::uint64_t kBytesPerBlock = 64;
inline constexpr std::uint64_t kProcessBytes = std::uint64_t{16} << 20;

MemoryEstimate estimate_run_memory(const SimConfig& config, const Geometry& geometry, std::uint64_t logical_pages);

// The bytes a compacted trace keeps for the replay.
std::uint64_t compact_trace_bytes(const CompactTrace& trace);

// The default limit: 4 GiB, or half the machine's physical memory if that is less.
std::uint64_t default_max_memory_bytes();

// invalid_argument when the plan's estimate exceeds `max_bytes`, naming the largest run, its
// estimate and what it is made of, and --max-memory.
Status check_memory(const SimulationPlan& plan, std::uint64_t max_bytes);
// The plan's estimate: compacted traces plus its largest run.
std::uint64_t plan_memory_bytes(const SimulationPlan& plan);

}  // namespace flashdir::sim
