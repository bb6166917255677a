#include <cassert>

#include "ftl/gc_policy.h"
#include "policies.h"

namespace flashdir::ftl {

std::unique_ptr<GcPolicy> make_gc_policy(format::GcPolicy policy, const BlockTable& table) {
  switch (policy) {
    case format::GcPolicy::dual_greedy: return make_dual_greedy_policy(table);
    case format::GcPolicy::greedy: return make_greedy_policy(table);
    case format::GcPolicy::cost_benefit: return make_cost_benefit_policy(table);
  }
  // The superblock decoder refuses unknown values, so this is a bug upstream.
  assert(false && "unknown GC policy");
  return make_dual_greedy_policy(table);
}

}  // namespace flashdir::ftl
