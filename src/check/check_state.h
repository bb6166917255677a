// Internal to src/check: what one step of check_cache_dir tells the steps after it.
#pragma once

#include <string>

namespace flashdir {

struct CheckState {
  // The chip image opens as it is (or as -y repaired it): the chip, FTL and cache checks run.
  bool image_usable = true;
  // -y rewrote block table entries or extended a truncated image: the FTL mapping is rebuilt
  // from a scan of every page, whatever the checkpoint says.
  bool rebuild_ftl = false;
  // Why the catalog cannot be used (missing, refused by RocksDB, records unreadable, another
  // cache's); empty if it can. -y replaces it once the cache check has saved the dirty pages.
  std::string catalog_unusable;
  bool catalog_replaced = false;
};

}  // namespace flashdir
