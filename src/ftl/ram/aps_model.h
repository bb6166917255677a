// APS's cost-benefit model (papers/aps-adaptive-partitioning.txt, Algorithm 1 and Table IV,
// the DFTL column) and the controller that turns it into moves of the split.
//
// aps_decide() is the paper's arithmetic: the profit of each ghost cache per byte it
// represents says which partition would gain more from RAM. How far to move is not the
// paper's (tune unit x the ratio of the two benefits, which either barely moves or swings the
// split from end to end, doc/ram.md "The step"): ApsStepController moves by a step of its own
// that grows while the direction holds and halves when it turns, and decides only on enough
// ghost hits. Pure arithmetic and state, so both can be checked by hand.
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
  std::uint64_t total() const { return buffer_reads + buffer_writes + mapping_reads + mapping_writes; }
};

struct ApsDecision {
  double profit_buffer = 0;    // P_GB, ns
  double profit_mapping = 0;   // P_GM, ns
  double benefit_buffer = 0;   // C_GB = P_GB / S_GB, ns per byte
  double benefit_mapping = 0;  // C_GM = P_GM / S_GM
};

// `ghost_buffer_bytes` and `ghost_mapping_bytes` are S_GB and S_GM: the sizes the ghosts
// represent. A ghost of no size has no benefit.
ApsDecision aps_decide(const ApsGhostHits& hits, const ApsCosts& costs, std::uint64_t ghost_buffer_bytes,
                       std::uint64_t ghost_mapping_bytes);

// How far the split moves, decision by decision. The direction is the larger benefit's; the
// step starts at `initial_step_bytes`, grows by half from the third decision in a row that
// keeps the direction (up to `max_step_bytes`) and halves when the direction turns (down to
// `min_step_bytes`): a sign-driven step (as in Rprop), so the move does not depend on the
// scale of the benefits, which varies by orders of magnitude between workloads and made the
// paper's tune unit x benefit ratio either stand still or swing end to end. Growing only from
// the third decision keeps noise from growing the step: coin-toss directions shrink it.
// Benefits within kDeadBand of each other (relative to their sum) hold the split; fewer than
// kMinGhostHits ghost hits are too few to decide on: the caller keeps counting into the same
// interval.
class ApsStepController {
 public:
  static constexpr double kGrowth = 1.5;        // while the direction holds ...
  static constexpr int kRunToGrow = 3;          // ... from this many decisions in a row on
  static constexpr double kShrink = 0.5;        // when it turns
  static constexpr double kDeadBand = 0.05;     // |C_GM - C_GB| / (C_GM + C_GB) below this: hold
  static constexpr std::uint64_t kMinGhostHits = 32;

  struct Step {
    bool decided = false;                // false: too few ghost hits; keep counting
    std::int64_t to_mapping_bytes = 0;   // > 0: mapping grows; < 0: the buffer grows
  };

  ApsStepController(std::uint64_t min_step_bytes, std::uint64_t initial_step_bytes, std::uint64_t max_step_bytes);

  Step next(const ApsDecision& decision, std::uint64_t ghost_hits);

  std::uint64_t step_bytes() const { return static_cast<std::uint64_t>(step_bytes_); }

 private:
  double min_step_bytes_, max_step_bytes_, step_bytes_;
  int last_direction_ = 0;  // +1 towards mapping, -1 towards the buffer, 0 none yet
  int run_ = 0;             // decisions in a row in last_direction_
};

}  // namespace flashdir::ram
