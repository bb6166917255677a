#include "fs/stats_baseline.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <initializer_list>
#include <string_view>

namespace flashdir::fs {
namespace {

// Sections whose rows are all cumulative counters.
constexpr std::string_view kCounterSections[] = {"requests", "data"};

// The cumulative counters of the other sections. Everything not named here is a gauge or a
// setting and is shown as it is.
struct SectionCounters {
  std::string_view section;
  std::initializer_list<std::string_view> rows;
};
const SectionCounters kCounters[] = {
    {"inodes", {"fd_evictions", "reopens_by_handle"}},
    {"cache",
     {"read_requests", "read_hit_pages", "read_miss_pages", "read_ahead_pages", "write_requests", "written_pages",
      "admitted_pages", "cutoff_bypassed_pages", "not_promoted_pages", "evicted_pages", "written_back_pages",
      "delayed_write_backs", "writer_waits", "commits", "corrupt_pages", "stale_drops", "renumbered_files", "backing_errors",
      "metadata_writes", "metadata_entries_written", "bypassed_opens"}},
    {"ftl",
     {"host_read_pages", "host_write_pages", "host_trim_pages", "chip_page_reads", "chip_page_programs",
      "chip_block_erases", "chip_busy_ns", "gc_runs", "gc_data_copies", "gc_translation_copies", "mapping_lookups",
      "mapping_hits", "checkpoints"}},
    {"cache_health", {"stops", "resumes", "failed_reopens", "opens_while_stopped", "refused_opens"}},
};

// A ratio row made of counters: numerator / (sum of the denominator rows), 0 when that is 0.
struct Ratio {
  std::string_view section;
  std::string_view row;
  std::string_view numerator;
  std::initializer_list<std::string_view> denominator;
};
const Ratio kRatios[] = {
    {"cache", "hit_ratio", "read_hit_pages", {"read_hit_pages", "read_miss_pages"}},
    {"cache", "metadata_writes_per_data_write", "metadata_writes", {"admitted_pages", "written_pages"}},
    {"cache", "entries_per_metadata_write", "metadata_entries_written", {"metadata_writes"}},
    {"ftl", "write_amplification", "chip_page_programs", {"host_write_pages"}},
    {"ftl", "mapping_hit_ratio", "mapping_hits", {"mapping_lookups"}},
};

bool is_counter(std::string_view section, std::string_view row) {
  if (std::find(std::begin(kCounterSections), std::end(kCounterSections), section) != std::end(kCounterSections))
    return true;
  for (const auto& counters : kCounters)
    if (counters.section == section)
      return std::find(counters.rows.begin(), counters.rows.end(), row) != counters.rows.end();
  return false;
}

std::string key_of(std::string_view section, std::string_view row) { return fmt::format("{}.{}", section, row); }

std::uint64_t counter_in(const StatsSection& section, std::string_view row) {
  for (const auto& [name, value] : section.rows)
    if (name == row)
      if (const auto* n = std::get_if<std::uint64_t>(&value)) return *n;
  return 0;
}

void recompute_ratios(std::vector<StatsSection>& sections) {
  for (auto& section : sections) {
    for (const auto& ratio : kRatios) {
      if (ratio.section != section.name) continue;
      std::uint64_t denominator = 0;
      for (const auto row : ratio.denominator) denominator += counter_in(section, row);
      const std::uint64_t numerator = counter_in(section, ratio.numerator);
      for (auto& [name, value] : section.rows)
        if (name == ratio.row)
          value = denominator == 0 ? 0.0 : static_cast<double>(numerator) / static_cast<double>(denominator);
    }
  }
}

}  // namespace

void StatsBaseline::reset(const std::vector<StatsSection>& raw) {
  std::map<std::string, std::uint64_t> baseline;
  for (const auto& section : raw)
    for (const auto& [name, value] : section.rows)
      if (const auto* n = std::get_if<std::uint64_t>(&value); n != nullptr && is_counter(section.name, name))
        baseline[key_of(section.name, name)] = *n;
  const std::time_t now = std::time(nullptr);
  std::lock_guard lock(mutex_);
  baseline_ = std::move(baseline);
  started_ = std::chrono::steady_clock::now();
  reset_at_ = fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::localtime(now));
}

void StatsBaseline::apply(std::vector<StatsSection>& sections) const {
  std::lock_guard lock(mutex_);
  for (auto& section : sections) {
    if (section.name == "mount") {
      section.rows.emplace_back("counters_seconds",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
      section.rows.emplace_back("counters_reset_at", reset_at_);
    }
    if (baseline_.empty()) continue;
    for (auto& [name, value] : section.rows) {
      auto* n = std::get_if<std::uint64_t>(&value);
      if (n == nullptr || !is_counter(section.name, name)) continue;
      const auto it = baseline_.find(key_of(section.name, name));
      // A counter below its baseline started again from zero (the cache stopped and was
      // reopened): what it shows now all happened since the reset.
      if (it != baseline_.end() && *n >= it->second) *n -= it->second;
    }
  }
  if (!baseline_.empty()) recompute_ratios(sections);
}

}  // namespace flashdir::fs
