#include "hot_cold_detector.h"

#include <algorithm>

namespace flashdir::ftl {

HotColdDetector::HotColdDetector(std::uint64_t logical_blocks, std::uint32_t read_hot_threshold,
                                 std::uint64_t aging_period_requests)
    : counters_(logical_blocks),
      read_hot_threshold_(std::max<std::uint32_t>(read_hot_threshold, 1)),
      aging_period_(std::max<std::uint64_t>(aging_period_requests, 1)) {}

HotColdDetector::Counters HotColdDetector::aged(std::uint64_t lbn) const {
  Counters c = counters_[lbn];
  const std::uint32_t steps = std::min<std::uint32_t>(epoch() - c.epoch, 16);
  c.reads = static_cast<std::uint16_t>(c.reads >> steps);
  c.epoch = epoch();
  return c;
}

void HotColdDetector::record(std::uint64_t lbn, std::uint32_t pages, bool is_write) {
  Counters c = aged(lbn);
  if (is_write) {
    c.last_write = requests_;
  } else {
    c.reads = static_cast<std::uint16_t>(std::min<std::uint32_t>(c.reads + pages, UINT16_MAX));
  }
  counters_[lbn] = c;
}

bool HotColdDetector::read_hot_write_cold(std::uint64_t lbn) const {
  const Counters c = aged(lbn);
  const bool write_cold = c.last_write == kNeverWritten || requests_ - c.last_write >= aging_period_;
  return c.reads >= read_hot_threshold_ && write_cold;
}

}  // namespace flashdir::ftl
