#include "damage_rule.h"

namespace flashdir {

std::vector<DamageVerdict> DamageRule::judge(const BlockDamage& damage) {
  std::vector<DamageVerdict> verdicts(damage.pages.size(), DamageVerdict::unexplained);
  if (clean_shutdown_ && damage.block.value < first_pool_block_) return verdicts;
  if (damage.whole_block() && !interrupted_erase_seen_) {
    interrupted_erase_seen_ = true;
    verdicts.assign(verdicts.size(), DamageVerdict::interrupted_erase);
    return verdicts;
  }
  for (std::size_t i = 0; i < damage.pages.size(); ++i) {
    if (damage.pages[i].index + 1 == damage.programmed_pages) verdicts[i] = DamageVerdict::torn_program;
  }
  return verdicts;
}

std::string DamageRule::unexplained_reason(const BlockDamage& damage) const {
  if (clean_shutdown_ && damage.block.value < first_pool_block_) {
    return "the cache was shut down cleanly, and both checkpoint slots were rewritten since any power cut";
  }
  if (damage.whole_block()) return "a second block with every programmed page damaged, and one erase at most is cut";
  return "not the last programmed page of its block, the only one a power cut tears";
}

}  // namespace flashdir
