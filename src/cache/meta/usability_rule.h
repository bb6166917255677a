// After a power cut, which on-chip slot entries may be served (DESIGN.md "cache"; doc/cache.md):
//   clean shutdown mark in the newest page   every VALID entry
//   lufuw                 VALID and (WRITING = 0 or its page is not in the newest page's window)
//   write-update          VALID and DIRTY (Flashcache: a clean entry may describe older data)
//   update-write-update   VALID and WRITING = 0
// "Newest" is the metadata page with the highest sequence among those that decode; a torn
// newest write leaves its previous version, whose data write never started.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "flashdir/cache/options.h"
#include "flashdir/format.h"

namespace flashdir::cache::meta {

// What the newest metadata page says about the whole cache.
struct ChipSummary {
  bool any_page = false;           // no page decoded: a cache with no entries
  std::uint64_t newest_sequence = 0;
  std::uint64_t newest_page = 0;
  bool clean_shutdown = false;
  std::vector<std::uint32_t> window;  // the newest page's, oldest first
  // A damaged page may have been the newest: every WRITING entry counts as unfinished.
  bool window_lost = false;
};

// From the headers of the pages that decoded (nullopt: never written or damaged).
ChipSummary summarize(std::span<const std::optional<format::MetadataPageHeader>> headers);

enum class Verdict : std::uint8_t { empty, usable, dropped };
Verdict judge(const ChipSummary& chip, MetadataScheme scheme, std::uint32_t page, const format::MetadataEntry& entry);

format::MetadataSchemeCode scheme_code(MetadataScheme scheme);

}  // namespace flashdir::cache::meta
