// CFTL's hot/cold detector (doc/ftl.md): per logical block, a read counter halved every aging
// period (lazily, when the block is next touched) and the request count of its last write. A
// block is read-hot when its decayed read count reaches a threshold and write-cold when no
// request of the last aging period wrote it. The paper counts per logical page; per block is
// cheaper and is what conversion decides on.
#pragma once

#include <cstdint>
#include <vector>

namespace flashdir::ftl {

class HotColdDetector {
 public:
  HotColdDetector(std::uint64_t logical_blocks, std::uint32_t read_hot_threshold, std::uint64_t aging_period_requests);

  // One host request touched `pages` pages of `lbn`.
  void record(std::uint64_t lbn, std::uint32_t pages, bool is_write);
  // Call once per host request, after record() for each block it touched.
  void end_request() { ++requests_; }

  bool read_hot_write_cold(std::uint64_t lbn) const;
  std::uint32_t reads(std::uint64_t lbn) const { return aged(lbn).reads; }

 private:
  static constexpr std::uint64_t kNeverWritten = UINT64_MAX;
  struct Counters {
    std::uint64_t last_write = kNeverWritten;  // request number
    std::uint32_t epoch = 0;
    std::uint16_t reads = 0;
  };
  Counters aged(std::uint64_t lbn) const;
  std::uint32_t epoch() const { return static_cast<std::uint32_t>(requests_ / aging_period_); }

  std::vector<Counters> counters_;
  std::uint32_t read_hot_threshold_;
  std::uint64_t aging_period_;
  std::uint64_t requests_ = 0;
};

}  // namespace flashdir::ftl
