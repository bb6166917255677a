// Victim selection (and, for Dual Greedy, hot/cold classification of host writes).
//
// The FTL owns the BlockTable and tells the policy about every change that matters to it;
// each notification comes after the table reflects the change. A policy keeps only its own
// indexes over closed blocks and reads counts and times from the table.
//
// Candidates are the closed blocks, data and translation alike; open (frontier), free and
// reserved blocks never are.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "block_table.h"
#include "flashdir/format.h"

namespace flashdir::ftl {

class GcPolicy {
 public:
  virtual ~GcPolicy() = default;

  // `block` went from open to closed: it is now a candidate.
  virtual void block_closed(BlockNumber block) = 0;
  // A valid page of `block` became invalid; `valid_before` is its count before (the table
  // already holds valid_before - 1 and the new last-invalidation time). Called for open and
  // closed blocks alike; only closed ones are indexed.
  virtual void page_invalidated(BlockNumber block, std::uint32_t valid_before) = 0;
  // `block` stops being a candidate (it was chosen as victim and is being collected).
  virtual void block_removed(BlockNumber block) = 0;

  // The next victim among the candidates, without removing it; nullopt if there are none.
  // Refreshes whatever state the policy updates "at each GC" (Dual Greedy's hot threshold).
  virtual std::optional<BlockNumber> select_victim(HostTime now) = 0;

  // Whether a host write whose previous version lives in `previous_block` carries hot data.
  // Policies without hot/cold separation answer false.
  virtual bool is_hot_write(BlockNumber previous_block, HostTime now) const = 0;

  // How many blocks the last select_victim looked at (Dual Greedy promises a bound that does
  // not grow with the chip: about pages_per_block).
  virtual std::uint64_t blocks_examined_last_selection() const = 0;
  // The current hot-lifetime threshold, for stats (0 for policies without one).
  virtual HostTime hot_threshold() const { return 0; }
};

std::unique_ptr<GcPolicy> make_gc_policy(format::GcPolicy policy, const BlockTable& table);

}  // namespace flashdir::ftl
