// Internal to src/check: which damaged pages a power cut explains (doc/format.md, "Damaged
// pages"). A cut tears the one operation in flight: a program leaves the pages it did not
// finish, the last programmed pages of their block, torn (one on a chip; every page from the
// cut to the end of the run on an image file whose process is killed between its block table
// and its pages), an erase leaves a block whose programmed pages are all noise. Recovery
// keeps such pool blocks as they are until GC erases them, but rewrites both checkpoint slots
// before the FTL next closes cleanly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flashdir/types.h"

namespace flashdir {

// The damaged pages of one block, as a scan finds them.
struct BlockDamage {
  struct Page {
    std::uint32_t index = 0;  // in the block
    std::string why;
    // The OOB record verifies and the data does not. A program writes the record after the
    // data, so a cut never leaves this: the medium damaged the page after it was programmed.
    bool record_intact = false;
  };
  BlockNumber block;
  std::uint32_t programmed_pages = 0;  // pages [0, programmed_pages) hold charge
  std::vector<Page> pages;             // in page order

  // Every programmed page damaged, and more than one of them (a single one is just the last).
  bool whole_block() const { return pages.size() == programmed_pages && programmed_pages > 1; }
};

enum class DamageVerdict {
  torn_program,       // among the damaged pages that end its block's programmed pages
  interrupted_erase,  // in the one block whose programmed pages are all damaged
  unexplained,        // media damage or a bug: an error
};

class DamageRule {
 public:
  // `clean_shutdown`: the superblock says so and the newest checkpoint carries no marker.
  // Blocks below `first_pool_block` hold the checkpoint slots.
  DamageRule(bool clean_shutdown, std::uint64_t first_pool_block)
      : clean_shutdown_(clean_shutdown), first_pool_block_(first_pool_block) {}

  // One verdict per damaged page of `damage`; at most one block per rule is an interrupted erase.
  std::vector<DamageVerdict> judge(const BlockDamage& damage);
  // Why `page`, an unexplained page of `damage`, is not a power cut's doing.
  std::string unexplained_reason(const BlockDamage& damage, const BlockDamage::Page& page) const;

 private:
  bool clean_shutdown_;
  std::uint64_t first_pool_block_;
  bool interrupted_erase_seen_ = false;
};

}  // namespace flashdir
