// Dual Greedy victim selection and hot/cold classification (papers/dual-greedy.txt sections
// III and IV; DESIGN.md "ftl — logical pages" is authoritative where the two differ).
//
// Cost of one selection, counted in blocks whose BlockTable record is read: up to 8 heads of
// the top level for the threshold, then at most one head per other non-empty level in
// stability mode, so at most pages_per_block + 8 whatever the chip size. Finding levels reads
// the non-empty bitmap, (pages_per_block + 1) / 64 words.
//
// One departure from the restatement: stability mode never picks a full block (see below).
#include <algorithm>
#include <cassert>

#include "lri_indexed_policy.h"
#include "policies.h"

namespace flashdir::ftl {
namespace {

// How many least-recently-invalidated blocks of the top level set the hot threshold (the
// paper's "fixed number (e.g., 8)").
constexpr int kThresholdSampleBlocks = 8;

class DualGreedyPolicy final : public LriIndexedPolicy {
 public:
  explicit DualGreedyPolicy(const BlockTable& table) : LriIndexedPolicy(table) {}

  std::optional<BlockNumber> select_victim(HostTime /*now*/) override {
    examined_ = 0;
    // Level 0 is not a level of the paper's lists: it only ever holds the best victims.
    const std::optional<std::uint32_t> top_level = lists_.lowest_nonempty_level(1);
    if (top_level) refresh_threshold(*top_level);
    // With no block above level 0 the threshold keeps its last value: nothing newer to learn.

    if (const auto empty_block = lists_.head(0)) {
      ++examined_;
      return empty_block;
    }
    if (!top_level) return std::nullopt;

    const BlockNumber top = *lists_.head(*top_level);  // examined by refresh_threshold
    if (lists_.next(top)) return top;                  // utilization mode

    // Stability mode: the lowest level whose head was invalidated less recently than the only
    // top-level block. A list is in LRI order, so if its head is not more stable than `top`,
    // none of its blocks is; and levels are visited by increasing valid count, so the first
    // match has the fewest valid pages.
    //
    // Full blocks (level pages_per_block) are left out although, never invalidated, they look
    // the most stable of all (time 0): collecting one frees nothing, and the GC frontier it is
    // copied to closes as another such block, so a GC run that needs free blocks would spin.
    const HostTime top_invalidated = table_.info(top).last_invalidation_time;
    const std::uint32_t full_level = table_.pages_per_block();
    for (auto level = lists_.lowest_nonempty_level(*top_level + 1); level && *level < full_level;
         level = lists_.lowest_nonempty_level(*level + 1)) {
      const BlockNumber head = *lists_.head(*level);
      ++examined_;
      if (table_.info(head).last_invalidation_time < top_invalidated) return head;
    }
    return top;
  }

  bool is_hot_write(BlockNumber previous_block, HostTime now) const override {
    const HostTime first_program = table_.info(previous_block).first_program_time;
    const HostTime lifetime = now > first_program ? now - first_program : 0;
    return lifetime < threshold_;
  }

  std::uint64_t blocks_examined_last_selection() const override { return examined_; }
  HostTime hot_threshold() const override { return threshold_; }

 private:
  // Threshold = the largest page lifetime (last invalidation - first program) among up to
  // kThresholdSampleBlocks heads of the top level: blocks full of hot data reach the top level
  // first, so their lifetimes mark what "short-lived" means for the current workload.
  void refresh_threshold(std::uint32_t top_level) {
    HostTime largest = 0;
    std::optional<BlockNumber> block = lists_.head(top_level);
    for (int i = 0; i < kThresholdSampleBlocks && block; ++i, block = lists_.next(*block)) {
      const BlockInfo& info = table_.info(*block);
      ++examined_;
      // A block never invalidated has last_invalidation_time 0: it has no page lifetime yet.
      if (info.last_invalidation_time > info.first_program_time) {
        largest = std::max(largest, info.last_invalidation_time - info.first_program_time);
      }
    }
    threshold_ = largest;
  }

  HostTime threshold_ = 0;  // 0 until the first selection: nothing is hot
  std::uint64_t examined_ = 0;
};

}  // namespace

std::unique_ptr<GcPolicy> make_dual_greedy_policy(const BlockTable& table) {
  return std::make_unique<DualGreedyPolicy>(table);
}

}  // namespace flashdir::ftl
