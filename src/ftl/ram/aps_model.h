// APS's cost-benefit model (papers/aps-adaptive-partitioning.txt, Algorithm 1 and Table IV,
// the DFTL column): at the end of each interval, the profit of each ghost cache per byte it
// represents decides which partition grows, by the tune unit times the ratio of the two.
// Pure arithmetic, so it can be checked by hand; every division is guarded.
#pragma once

#include <cstdint>

namespace flashdir::ram {

// Costs measured online, in nanoseconds of chip time.
struct ApsCosts {
  double read_ns = 0;                     // T_r
  double program_ns = 0;                  // T_w
  double translation_gc_ns_per_page = 0;  // T_two: average cost of reclaiming a translation block / pages per block
  double data_gc_ns_per_page = 0;         // T_dwo: the same for a data block
  double batch_factor = 1;                // F_b: mapping entries written back per translation page written
  double read_miss_ratio = 0;             // R_r_mis_CMT
  double write_miss_ratio = 0;            // R_w_mis_CMT
};

// Hits in the ghost caches during the interval (N_r_GB, N_w_GB, N_r_GM, N_w_GM).
struct ApsGhostHits {
  std::uint64_t buffer_reads = 0;
  std::uint64_t buffer_writes = 0;
  std::uint64_t mapping_reads = 0;
  std::uint64_t mapping_writes = 0;
};

struct ApsDecision {
  double profit_buffer = 0;         // P_GB, ns
  double profit_mapping = 0;        // P_GM, ns
  double benefit_buffer = 0;        // C_GB = P_GB / S_GB, ns per byte
  double benefit_mapping = 0;       // C_GM = P_GM / S_GM
  std::int64_t to_mapping_bytes = 0;  // > 0: mapping grows; < 0: the buffer grows
};

// `ghost_buffer_bytes` and `ghost_mapping_bytes` are S_GB and S_GM: the sizes the ghosts
// represent. The move is tune_unit_bytes x the ratio of the larger benefit to the smaller,
// the ratio capped at `max_ratio` (a side with no benefit would otherwise make it infinite).
ApsDecision aps_decide(const ApsGhostHits& hits, const ApsCosts& costs, std::uint64_t ghost_buffer_bytes,
                       std::uint64_t ghost_mapping_bytes, std::uint64_t tune_unit_bytes, double max_ratio);

}  // namespace flashdir::ram
