// Kawaguchi's cost-benefit victim selection: score = a * (1 - u) / 2u with u the fraction of
// valid pages and a the age (host writes since the last invalidation); the highest score wins.
// Written as a * (P - v) / (2 v) for v valid pages out of P, so nothing divides by zero once
// v = 0 is handled apart (an empty block costs nothing to collect: take it at once).
//
// This is the baseline Dual Greedy improves on: every selection scores every candidate, O(N).
// Candidates sit in a compact vector with an index map, so closing and removing are O(1).
#include <cassert>
#include <limits>
#include <vector>

#include "ftl/gc_policy.h"
#include "policies.h"

namespace flashdir::ftl {
namespace {

class CostBenefitPolicy final : public GcPolicy {
 public:
  explicit CostBenefitPolicy(const BlockTable& table)
      : table_(table), position_(table.block_count(), kAbsent) {
    assert(table.pages_per_block() > 0);
  }

  void block_closed(BlockNumber block) override {
    assert(table_.info(block).state == BlockState::closed);
    assert(position_[block.value] == kAbsent && "block closed twice");
    position_[block.value] = candidates_.size();
    candidates_.push_back(block);
  }

  // Scores read the table at selection time; there is nothing to index.
  void page_invalidated(BlockNumber /*block*/, std::uint32_t /*valid_before*/) override {}

  void block_removed(BlockNumber block) override {
    const std::uint64_t at = position_[block.value];
    assert(at != kAbsent && "block is not a candidate");
    const BlockNumber last = candidates_.back();
    candidates_[at] = last;
    position_[last.value] = at;
    candidates_.pop_back();
    position_[block.value] = kAbsent;
  }

  std::optional<BlockNumber> select_victim(HostTime now) override {
    examined_ = 0;
    std::optional<BlockNumber> best;
    double best_score = -1;
    std::uint32_t best_valid = 0;
    for (const BlockNumber block : candidates_) {
      const BlockInfo& info = table_.info(block);
      ++examined_;
      if (info.valid_pages == 0) return block;
      const double score = score_of(info, now);
      // Ties (all ages 0, say) go to the fewer valid pages, then the lower block number, so the
      // choice does not depend on the order swap-removal left the vector in.
      if (!best || score > best_score ||
          (score == best_score &&
           (info.valid_pages < best_valid || (info.valid_pages == best_valid && block < *best)))) {
        best = block;
        best_score = score;
        best_valid = info.valid_pages;
      }
    }
    return best;
  }

  bool is_hot_write(BlockNumber /*previous_block*/, HostTime /*now*/) const override { return false; }
  std::uint64_t blocks_examined_last_selection() const override { return examined_; }

 private:
  static constexpr std::uint64_t kAbsent = std::numeric_limits<std::uint64_t>::max();

  // For valid_pages > 0.
  double score_of(const BlockInfo& info, HostTime now) const {
    const HostTime age = now > info.last_invalidation_time ? now - info.last_invalidation_time : 0;
    const std::uint32_t pages = table_.pages_per_block();
    const std::uint32_t invalid = pages > info.valid_pages ? pages - info.valid_pages : 0;
    return static_cast<double>(age) * static_cast<double>(invalid) /
           (2.0 * static_cast<double>(info.valid_pages));
  }

  const BlockTable& table_;
  std::vector<BlockNumber> candidates_;
  std::vector<std::uint64_t> position_;  // per block: index in candidates_, or kAbsent
  std::uint64_t examined_ = 0;
};

}  // namespace

std::unique_ptr<GcPolicy> make_cost_benefit_policy(const BlockTable& table) {
  return std::make_unique<CostBenefitPolicy>(table);
}

}  // namespace flashdir::ftl
