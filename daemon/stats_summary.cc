#include "stats_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace flashdir::stats {
namespace {

// One line: a label in a column, then what it says.
void line(std::string& out, std::string_view label, const std::string& value) {
  out += fmt::format("{:<20}{}\n", label, value);
}

std::string period(const Json& s) {
  const std::string reset_at = text(s, "mount", "counters_reset_at");
  const std::string length = duration(number(s, "mount", "counters_seconds"));
  if (reset_at.empty()) return fmt::format("since the mount, {} ago", length);
  return fmt::format("since the reset at {}, {} ago", reset_at, length);
}

void reads(std::string& out, const Json& s) {
  const std::uint64_t hits = count(s, "cache", "read_hit_pages");
  const std::uint64_t misses = count(s, "cache", "read_miss_pages");
  line(out, "Read", fmt::format("{} in {}", bytes(count(s, "data", "read_bytes")),
                                plural(count(s, "data", "read_requests"), "request")));
  line(out, "  hit ratio", hits + misses == 0 ? std::string("- (nothing read through the cache)")
                                              : fmt::format("{} of the pages looked up in the cache ({} of {})",
                                                            percent(hits, hits + misses), hits, hits + misses));
  line(out, "  from the cache", bytes(cache_bytes(s, "read_hit_pages")));
  std::string backing = fmt::format("{} missed", bytes(cache_bytes(s, "read_miss_pages")));
  if (const std::uint64_t ahead = cache_bytes(s, "read_ahead_pages"); ahead != 0)
    backing += fmt::format(" (and {} read ahead into the cache)", bytes(ahead));
  if (const std::uint64_t passed = count(s, "data", "pass_through_read_bytes"); passed != 0)
    backing += fmt::format(", {} passed through", bytes(passed));
  line(out, "  from the backing", backing);
}

void writes(std::string& out, const Json& s) {
  std::string value = fmt::format("{} in {}", bytes(count(s, "data", "written_bytes")),
                                  plural(count(s, "data", "write_requests"), "request"));
  if (const std::uint64_t back = cache_bytes(s, "written_back_pages"); back != 0)
    value += fmt::format(", {} written back from the cache", bytes(back));
  line(out, "Written", value);
}

// What did not go through the cache, and why.
void bypassed(std::string& out, const Json& s) {
  const std::uint64_t passed = count(s, "data", "pass_through_read_bytes") + count(s, "data", "pass_through_written_bytes");
  std::string value = fmt::format("{} by the sequential cutoffs, {} passed through", bytes(cache_bytes(s, "cutoff_bypassed_pages")),
                                  bytes(passed));
  if (const std::uint64_t opens = count(s, "cache", "bypassed_opens"); opens != 0)
    value += fmt::format(" ({}: hard-linked or unnamed files)", plural(opens, "open"));
  if (const std::uint64_t cold = cache_bytes(s, "not_promoted_pages"); cold != 0)
    value += fmt::format(", {} not promoted (too few misses)", bytes(cold));
  if (const std::uint64_t stopped = count(s, "cache_health", "opens_while_stopped"); stopped != 0)
    value += fmt::format(", {} while the cache was stopped", plural(stopped, "open"));
  line(out, "Bypassed the cache", value);
  const auto cutoff = [&s](std::string_view row) {
    const std::uint64_t n = count(s, "mount", row);
    return n == 0 ? std::string("none") : bytes(n);
  };
  line(out, "Sequential cutoff", fmt::format("reads {}, writes {} (a longer sequential stream of a file bypasses the cache)",
                                             cutoff("seq_cutoff_read_bytes"), cutoff("seq_cutoff_write_bytes")));
}

void fill(std::string& out, const Json& s) {
  const std::uint64_t cached = cache_bytes(s, "cached_pages");
  const std::uint64_t capacity = cache_bytes(s, "capacity_pages");
  line(out, "Cache fill", fmt::format("{} of {} ({})", bytes(cached), bytes(capacity), percent(cached, capacity)));
  line(out, "  dirty", fmt::format("{} (written to the cache, not yet to the backing)", bytes(cache_bytes(s, "dirty_pages"))));
  line(out, "  evicted", bytes(cache_bytes(s, "evicted_pages")));
}

// Chip page programs per page the cache wrote to its simulated SSD, and what they were.
void write_amplification(std::string& out, const Json& s) {
  const std::uint64_t written = count(s, "ftl", "host_write_pages");
  if (written == 0) return line(out, "Write amplification", "- (nothing written to the cache's device)");
  const std::uint64_t programs = count(s, "ftl", "chip_page_programs");
  const std::uint64_t gc = count(s, "ftl", "gc_data_copies") + count(s, "ftl", "gc_translation_copies");
  const std::uint64_t page = std::max<std::uint64_t>(page_size_bytes(s), 1);
  const std::uint64_t buffered = count(s, "ftl", "ram_buffer_bytes") / page;
  // Programs neither of a host page nor of a GC copy: the FTL's mapping and checkpoints.
  const std::uint64_t host_programmed = written - std::min(written, buffered);
  const std::uint64_t mapping = programs - std::min(programs, gc + host_programmed);
  const auto per_page = [written](std::uint64_t n) { return static_cast<double>(n) / static_cast<double>(written); };
  std::string value = fmt::format("{:.2f} chip programs per page the cache wrote (GC {:.2f}, FTL mapping {:.2f}; "
                                  "{} of them metadata)",
                                  per_page(programs), per_page(gc), per_page(mapping),
                                  percent(count(s, "cache", "metadata_writes"), written));
  // Until they are programmed, the pages in the device's write buffer keep the figure below 1.
  if (buffered != 0) value += fmt::format("; {} wait in device RAM", plural(buffered, "page"));
  line(out, "Write amplification", value);
}

// The simulated SSD's FTL: what runs, and the counters of its mapping scheme and RAM policy.
void device(std::string& out, const Json& s) {
  line(out, "Device FTL",
       fmt::format("{} mapping, {} GC, {} device RAM of {} (mapping {}, write buffer {})", text(s, "ftl", "mapping_scheme"),
                   text(s, "ftl", "gc_policy"), text(s, "ftl", "ram_policy"), bytes(count(s, "ftl", "ram_budget_bytes")),
                   bytes(count(s, "ftl", "ram_mapping_bytes")), bytes(count(s, "ftl", "ram_buffer_bytes"))));
  line(out, "  mapping",
       fmt::format("{} hits; CBMT {} of {} lookups; conversions to block {}, to page {}; APS repartitions {}",
                   percent(count(s, "ftl", "mapping_hits"), count(s, "ftl", "mapping_lookups")),
                   count(s, "ftl", "cbmt_hits"), count(s, "ftl", "cbmt_lookups"), count(s, "ftl", "conversions_to_block"),
                   count(s, "ftl", "conversions_to_page"), count(s, "ftl", "aps_repartitions")));
}

void restart(std::string& out, const Json& s) {
  const std::uint64_t usable = count(s, "cache", "restart_usable_slots");
  const double took = number(s, "cache", "restart_seconds");
  if (flag(s, "cache", "restart_clean_shutdown")) {
    std::string value = fmt::format("after a clean shutdown: {} kept ({}), in {}", plural(usable, "page"),
                                    bytes(usable * page_size_bytes(s)), duration(took));
    if (flag(s, "cache", "restart_from_image")) {
      value += " from the restart image";
      // Its parts are read as they are needed: damage is found, and counted, from then on.
      if (const std::uint64_t damaged = count(s, "cache", "restart_image_parts_damaged"); damaged != 0) {
        value += fmt::format(" ({} rebuilt from the chip, {} lost)", plural(damaged, "damaged part"),
                             plural(count(s, "cache", "restart_image_slots_lost"), "page"));
      }
    }
    line(out, "Restart", value);
    return;
  }
  const std::uint64_t found = usable + count(s, "cache", "restart_dropped_slots") + count(s, "cache", "restart_orphan_slots");
  std::string value = fmt::format("after a crash: {} of {} pages usable ({}), in {}", usable, found,
                                  percent(number(s, "cache", "restart_usable_fraction")), duration(took));
  if (const std::uint64_t dirty = count(s, "cache", "restart_dirty_slots"); dirty != 0)
    value += fmt::format("; {} dirty, {} written back", dirty, count(s, "cache", "restart_written_back_slots"));
  if (const std::uint64_t lost = count(s, "cache", "restart_lost_dirty_slots"); lost != 0)
    value += fmt::format("; {} LOST in {} (see --all)", plural(lost, "dirty page"),
                         plural(count(s, "cache", "restart_files_with_losses"), "file"));
  if (const std::uint64_t saved = count(s, "cache", "restart_saved_dirty_slots"); saved != 0)
    value += fmt::format("; {} saved in lost+found", plural(saved, "dirty page"));
  line(out, "Restart", value);
}

void consistency(std::string& out, const Json& s) {
  const double shortest = number(s, "mount", "kernel_cache_min_seconds");
  const double longest = number(s, "mount", "kernel_cache_max_seconds");
  std::string names = "at the next system call";
  if (longest > 0)
    names = "within " + (shortest == longest ? duration(shortest)
                                            : fmt::format("{} to {}", duration(shortest), duration(longest)));
  line(out, "Consistency", fmt::format("{}: a change behind the mount is seen in names and attributes {}, in file "
                                       "data at the next open", text(s, "mount", "consistency"), names));
}

// The cache's state: caching, stopped (and why), or no cache at all.
void health(std::string& out, const Json& s) {
  if (!s.contains("cache_health")) return line(out, "Cache", text(s, "cache", "engine"));
  const std::string state = text(s, "cache_health", "state");
  std::string value = state;
  if (const std::string reason = text(s, "cache_health", "reason"); !reason.empty()) value += fmt::format(" ({})", reason);
  value += fmt::format(", {} free on its file system", bytes(count(s, "cache_health", "free_bytes")));
  line(out, "Cache state", value);
}

}  // namespace

std::string summary(const std::string& mount, const Json& s) {
  std::string out = fmt::format("{}: {} cache of {} ({}{})\n", mount, text(s, "mount", "mode"), text(s, "mount", "backing"),
                                text(s, "mount", "backing_type"), flag(s, "mount", "backing_remote") ? ", remote" : "");
  out += fmt::format("counters {}; cache {}\n", period(s), text(s, "mount", "cache"));
  reads(out, s);
  writes(out, s);
  bypassed(out, s);
  // Without a running engine there is no fill, device or restart to report.
  if (s.contains("ftl")) {
    fill(out, s);
    write_amplification(out, s);
    device(out, s);
    restart(out, s);
  }
  consistency(out, s);
  health(out, s);
  return out;
}

}  // namespace flashdir::stats
