// Internal to src/check: CACHE/lost+found (doc/cache.md "Restart after a cut"): what fsck
// says of it, and how fsck -y saves there the dirty pages whose file the catalog cannot name,
// through the engine's own cache::LostFound (the same names and .txt files).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cache/meta/metadata_store.h"
#include "flashdir/cache_dir.h"
#include "flashdir/check.h"
#include "flashdir/ftl/ftl.h"
#include "slot_sort.h"

namespace flashdir {

// Notes naming the saved dirty pages and the catalogs fsck -y replaced: data only an admin can
// put back, or delete.
void report_lost_found(const CacheDirPaths& paths, CheckReport& report);

// Saves the readable dirty pages of `by_file` (file id -> its slots) as files named by their
// ids (the catalog has no record of them), each kept for `reason(file id)`, synced before this
// returns. A page that no longer reads is left out and listed in `lost`. Appends one line per
// saved file to `saved`.
Status save_in_lost_found(const CacheDirPaths& paths, Ftl& ftl, const cache::SlotLayout& layout,
                          const std::map<std::uint64_t, std::vector<cache::RecoveredSlot>>& by_file,
                          const std::function<std::string(std::uint64_t)>& reason, std::vector<std::string>& saved,
                          std::vector<std::string>& lost);

}  // namespace flashdir
