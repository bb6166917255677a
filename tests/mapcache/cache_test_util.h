// Shared helpers of the mapping-cache tests.
#pragma once

#include <cstdint>
#include <ostream>

#include "ftl/mapcache/entry_cache.h"

namespace flashdir::ftl {

// Lets Catch print runs (and vectors of them) when a comparison fails.
inline std::ostream& operator<<(std::ostream& out, const CachedRun& run) {
  out << "(" << run.lpn.value << ", ";
  if (run.ppn == kUnmappedPpn) {
    out << "unmapped";
  } else {
    out << run.ppn;
  }
  return out << ", " << run.length << (run.dirty ? ", dirty)" : ")");
}

}  // namespace flashdir::ftl

namespace flashdir::testing {

inline ftl::CachedRun run(std::uint64_t lpn, std::uint32_t ppn, std::uint32_t length,
                          bool dirty = false) {
  return ftl::CachedRun{Lpn(lpn), ppn, length, dirty};
}

// 1024 LPNs per translation page, as with 4 KiB pages.
inline ftl::EntryCacheOptions cftl_options(std::uint64_t capacity_bytes = 1 << 20,
                                           ftl::EntryEviction eviction = ftl::EntryEviction::lfu) {
  return ftl::EntryCacheOptions{capacity_bytes, 12, true, eviction, 1024};
}

inline ftl::EntryCacheOptions dftl_options(std::uint64_t capacity_bytes = 1 << 20) {
  return ftl::EntryCacheOptions{capacity_bytes, 8, false, ftl::EntryEviction::lru};
}

}  // namespace flashdir::testing
