#include "aps_model.h"

#include <algorithm>
#include <cmath>

namespace flashdir::ram {
namespace {

double per_byte(double profit, std::uint64_t bytes) { return bytes == 0 ? 0.0 : profit / static_cast<double>(bytes); }

}  // namespace

ApsDecision aps_decide(const ApsGhostHits& hits, const ApsCosts& costs, std::uint64_t ghost_buffer_bytes,
                       std::uint64_t ghost_mapping_bytes, std::uint64_t tune_unit_bytes, double max_ratio) {
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
  if (d.benefit_buffer == d.benefit_mapping) return d;
  const double high = std::max(d.benefit_buffer, d.benefit_mapping);
  const double low = std::min(d.benefit_buffer, d.benefit_mapping);
  const double ratio = low <= 0 ? max_ratio : std::min(high / low, max_ratio);
  const auto move = static_cast<std::int64_t>(std::llround(static_cast<double>(tune_unit_bytes) * ratio));
  d.to_mapping_bytes = d.benefit_mapping > d.benefit_buffer ? move : -move;
  return d;
}

}  // namespace flashdir::ram
