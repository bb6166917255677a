#include "damage_rule.h"

namespace flashdir {

std::vector<DamageVerdict> DamageRule::judge(const BlockDamage& damage) {
  std::vector<DamageVerdict> verdicts(damage.pages.size(), DamageVerdict::unexplained);
  if (clean_shutdown_ && damage.block.value < first_pool_block_) return verdicts;
  if (damage.whole_block()) {
    // A second such block is an error even though one program cut short in an empty block
    // could leave it too: fsck prefers a false alarm to missing a failed block (doc/format.md).
    if (interrupted_erase_seen_) return verdicts;
    interrupted_erase_seen_ = true;
    verdicts.assign(verdicts.size(), DamageVerdict::interrupted_erase);
    return verdicts;
  }
  // The damaged pages that end the block, back to the last whole record: what a program cut
  // short leaves (the FTL's replay skips the same pages, src/ftl/replay.cc).
  std::uint32_t next = damage.programmed_pages;
  for (std::size_t i = damage.pages.size(); i-- > 0 && damage.pages[i].index + 1 == next; --next) {
    if (damage.pages[i].record_intact) break;
    verdicts[i] = DamageVerdict::torn_program;
  }
  return verdicts;
}

std::string DamageRule::unexplained_reason(const BlockDamage& damage, const BlockDamage::Page& page) const {
  if (clean_shutdown_ && damage.block.value < first_pool_block_) {
    return "the cache was shut down cleanly, and both checkpoint slots were rewritten since any power cut";
  }
  if (damage.whole_block()) return "a second block with every programmed page damaged, and one erase at most is cut";
  if (page.record_intact) {
    return "its OOB record verifies, and a program writes the record after the data: media damage, not a power cut";
  }
  return "pages with whole records follow it in its block, and a power cut tears only the last programmed pages";
}

}  // namespace flashdir
