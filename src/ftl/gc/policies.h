// The victim-selection policies behind make_gc_policy (../gc_policy.h), one per file. Each takes
// the FTL's BlockTable by reference and reads it for the life of the policy.
#pragma once

#include <memory>

#include "ftl/gc_policy.h"

namespace flashdir::ftl {

// Dual Greedy (papers/dual-greedy.txt, as restated in DESIGN.md): multi-LRI lists, a hot
// threshold refreshed at each selection, utilization and stability modes. Selection costs
// O(pages_per_block) whatever the number of blocks.
std::unique_ptr<GcPolicy> make_dual_greedy_policy(const BlockTable& table);
// The closed block with the fewest valid pages, the least recently invalidated among equals.
std::unique_ptr<GcPolicy> make_greedy_policy(const BlockTable& table);
// Kawaguchi's cost-benefit, age * (1 - u) / 2u, scanning every candidate (the O(N) baseline).
std::unique_ptr<GcPolicy> make_cost_benefit_policy(const BlockTable& table);

}  // namespace flashdir::ftl
