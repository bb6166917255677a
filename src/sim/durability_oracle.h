// The oracle of flashdir-sim's torture mode: what each LPN may read back after a power cut,
// by the FTL's durability contract (ftl.h): the newest write at or below the durable
// watermark before the cut, or any write acknowledged after it, or the write in flight; never
// an older version. Without a cut, exactly the newest acknowledged write.
//
// Page contents carry their identity: every page written in torture mode starts with its LPN
// and a version (a counter of the run's writes, stamp_page), so a page read back names the
// write it came from. Memory: two versions per LPN, plus the acknowledged writes not yet
// durable (bounded by what the device RAM buffers between flushes), in version order.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "flashdir/types.h"

namespace flashdir::sim::detail {

// Writes (lpn, version) into the first 16 bytes of `page` (at least 16 bytes), little-endian.
void stamp_page(ByteSpan page, std::uint64_t lpn, std::uint64_t version);

// What a page read back holds.
struct PageIdentity {
  std::uint64_t lpn = 0;
  std::uint64_t version = 0;  // 0: never written (all zeros)
};
PageIdentity read_stamp(ConstByteSpan page);

class DurabilityOracle {
 public:
  explicit DurabilityOracle(std::uint64_t logical_pages);

  // A write of [first, first + count) stamped with `version` was acknowledged with the FTL's
  // sequence number `sequence`. Versions only grow.
  void wrote(std::uint64_t first, std::uint32_t count, std::uint64_t version, std::uint64_t sequence);
  // The FTL's durable watermark now: acknowledged writes at or below it become the floor.
  void durable(std::uint64_t durable_sequence);
  // The write that was in flight when the power went.
  void in_flight(std::uint64_t first, std::uint32_t count, std::uint64_t version);

  // Without a cut since the last settle: the one version `lpn` must read as.
  std::uint64_t expected(std::uint64_t lpn) const { return latest_[lpn]; }
  // After a cut: whether `version` is allowed for `lpn`.
  bool allows(std::uint64_t lpn, std::uint64_t version) const;
  // "durable 12, acknowledged since: 30, 41; in flight 45", for a violation's message.
  std::string describe(std::uint64_t lpn) const;
  // After a recovery that was checked: `version` is what `lpn` holds from now on.
  void settle(std::uint64_t lpn, std::uint64_t version);
  // After every LPN was settled: nothing is pending or in flight any more.
  void settled_all();

  std::uint64_t logical_pages() const { return floor_.size(); }
  std::uint64_t pending_writes() const { return pending_.size(); }

 private:
  struct Write {
    std::uint64_t first = 0;
    std::uint32_t count = 0;
    std::uint64_t version = 0;
    std::uint64_t sequence = 0;
    bool covers(std::uint64_t lpn) const { return lpn >= first && lpn - first < count; }
  };
  // The pending write stamped `version`, if it covers `lpn`.
  bool pending_wrote(std::uint64_t lpn, std::uint64_t version) const;

  std::vector<std::uint64_t> floor_;   // newest durable version per LPN
  std::vector<std::uint64_t> latest_;  // newest acknowledged version per LPN
  std::deque<Write> pending_;          // acknowledged, above the durable watermark; by version
  std::optional<Write> in_flight_;
};

}  // namespace flashdir::sim::detail
