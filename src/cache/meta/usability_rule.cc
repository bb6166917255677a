#include "cache/meta/usability_rule.h"

#include <algorithm>

namespace flashdir::cache::meta {

ChipSummary summarize(std::span<const std::optional<format::MetadataPageHeader>> headers) {
  ChipSummary summary;
  for (const auto& header : headers) {
    if (!header || (summary.any_page && header->sequence <= summary.newest_sequence)) continue;
    summary.any_page = true;
    summary.newest_sequence = header->sequence;
    summary.newest_page = header->page_number;
    summary.clean_shutdown = header->clean_shutdown;
    summary.window = header->window;
  }
  return summary;
}

Verdict judge(const ChipSummary& chip, MetadataScheme scheme, std::uint32_t page, const format::MetadataEntry& entry) {
  if (!entry.valid()) return Verdict::empty;
  if (chip.clean_shutdown) return Verdict::usable;
  switch (scheme) {
    case MetadataScheme::lufuw: {
      if (!entry.writing()) return Verdict::usable;
      const bool unfinished = chip.window_lost || std::find(chip.window.begin(), chip.window.end(), page) != chip.window.end();
      return unfinished ? Verdict::dropped : Verdict::usable;
    }
    case MetadataScheme::write_update:
      return entry.dirty() && !entry.writing() ? Verdict::usable : Verdict::dropped;
    case MetadataScheme::update_write_update:
      return entry.writing() ? Verdict::dropped : Verdict::usable;
  }
  return Verdict::dropped;
}

format::MetadataSchemeCode scheme_code(MetadataScheme scheme) {
  switch (scheme) {
    case MetadataScheme::lufuw: return format::MetadataSchemeCode::lufuw;
    case MetadataScheme::write_update: return format::MetadataSchemeCode::write_update;
    case MetadataScheme::update_write_update: return format::MetadataSchemeCode::update_write_update;
  }
  return format::MetadataSchemeCode::lufuw;
}

}  // namespace flashdir::cache::meta
