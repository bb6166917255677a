#include "aps_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace flashdir::ram {
namespace {

double per_byte(double profit, std::uint64_t bytes) { return bytes == 0 ? 0.0 : profit / static_cast<double>(bytes); }

}  // namespace

ApsDecision aps_decide(const ApsGhostHits& hits, const ApsCosts& costs, std::uint64_t ghost_buffer_bytes,
                       std::uint64_t ghost_mapping_bytes) {
  const double Tr = costs.read_ns;
  const double Tw = costs.program_ns;
  const double Fb = std::max(costs.batch_factor, 1.0);
  // Writing back one translation page, shared by the F_b entries it carries.
  const double flush_per_entry = (Tr + Tw + costs.translation_gc_ns_per_page) / Fb;

  const double pf_read_mapping = Tr;
  const double pf_write_mapping = flush_per_entry;
  const double pf_read_buffer = Tr + Tr * costs.read_miss_ratio;
  const double pf_write_buffer = Tw + costs.data_gc_ns_per_page + flush_per_entry * costs.write_miss_ratio;

  ApsDecision d;
  d.profit_mapping = static_cast<double>(hits.mapping_reads) * pf_read_mapping +
                     static_cast<double>(hits.mapping_writes) * pf_write_mapping;
  d.profit_buffer = static_cast<double>(hits.buffer_reads) * pf_read_buffer +
                    static_cast<double>(hits.buffer_writes) * pf_write_buffer;
  d.benefit_mapping = per_byte(d.profit_mapping, ghost_mapping_bytes);
  d.benefit_buffer = per_byte(d.profit_buffer, ghost_buffer_bytes);
  return d;
}

ApsStepController::ApsStepController(std::uint64_t min_step_bytes, std::uint64_t initial_step_bytes,
                                     std::uint64_t max_step_bytes)
    : min_step_bytes_(static_cast<double>(std::max<std::uint64_t>(min_step_bytes, 1))),
      max_step_bytes_(std::max(static_cast<double>(max_step_bytes), min_step_bytes_)),
      step_bytes_(std::clamp(static_cast<double>(initial_step_bytes), min_step_bytes_, max_step_bytes_)) {}

ApsStepController::Step ApsStepController::next(const ApsDecision& d, std::uint64_t ghost_hits) {
  if (ghost_hits < kMinGhostHits) return {};
  const double sum = d.benefit_buffer + d.benefit_mapping;
  if (!(sum > 0) || std::abs(d.benefit_mapping - d.benefit_buffer) < kDeadBand * sum) return {true, 0};
  const int direction = d.benefit_mapping > d.benefit_buffer ? 1 : -1;
  run_ = direction == last_direction_ ? run_ + 1 : 1;
  if (last_direction_ != 0 && direction != last_direction_) {
    step_bytes_ = std::max(step_bytes_ * kShrink, min_step_bytes_);
  } else if (run_ >= kRunToGrow) {
    step_bytes_ = std::min(step_bytes_ * kGrowth, max_step_bytes_);
  }
  last_direction_ = direction;
  return {true, direction * static_cast<std::int64_t>(std::llround(step_bytes_))};
}

}  // namespace flashdir::ram
