// Greedy victim selection (Kawaguchi et al.): the block with the fewest valid pages. The
// multi-LRI lists give it in O(1) list work: the head of the lowest non-empty level, which is
// also the least recently invalidated among blocks with that count.
#include "lri_indexed_policy.h"
#include "policies.h"

namespace flashdir::ftl {
namespace {

class GreedyPolicy final : public LriIndexedPolicy {
 public:
  explicit GreedyPolicy(const BlockTable& table) : LriIndexedPolicy(table) {}

  std::optional<BlockNumber> select_victim(HostTime /*now*/) override {
    examined_ = 0;
    const std::optional<std::uint32_t> level = lists_.lowest_nonempty_level(0);
    if (!level) return std::nullopt;
    examined_ = 1;
    return lists_.head(*level);
  }

  bool is_hot_write(BlockNumber /*previous_block*/, HostTime /*now*/) const override { return false; }
  std::uint64_t blocks_examined_last_selection() const override { return examined_; }

 private:
  std::uint64_t examined_ = 0;
};

}  // namespace

std::unique_ptr<GcPolicy> make_greedy_policy(const BlockTable& table) {
  return std::make_unique<GreedyPolicy>(table);
}

}  // namespace flashdir::ftl
