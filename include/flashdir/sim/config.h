// What one flashdir-sim run simulates: the chip, the FTL and how the trace is replayed, as one
// struct whose every field can be set by name from text (`set("mapping", "dftl")`). The names
// are the command-line options without their dashes and the keys of `--compare`, so a field
// added here (with its entry in config.cc's key table) is at once an option and a comparable
// key.
//
// Every value is validated when it is set; the message names the key and the value:
// "op=120: over-provisioning must be at least 0 and below 100 percent". Checks that involve
// several fields (a geometry, a chip too small for the trace) happen when the run is planned.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "flashdir/format.h"
#include "flashdir/ftl/options.h"
#include "flashdir/geometry.h"
#include "flashdir/status.h"

namespace flashdir::sim {

// Where the chip keeps its pages: `metadata` keeps OOB records and block state but no host
// data (fast replay; the FTL is handed empty data spans), `memory` keeps everything.
enum class Backend { metadata, memory };
const char* backend_name(Backend backend);

// How the chunks a trace touches are numbered in the compacted logical space (compaction.h).
enum class ChunkOrder {
  address,      // by device, then address: neighbours stay neighbours (the default)
  first_touch,  // in the order the trace first touches them
};
const char* chunk_order_name(ChunkOrder order);

// Torture mode (runner.h, doc/sim.md): cut the chip's power during the replay, recover, check
// the durability contract against an oracle and carry on.
struct PowerCutPlan {
  enum class Mode {
    off,
    every,   // after every `operations` chip operations of a session (recovery included)
    random,  // at seeded random operations, one in `operations` on average
  };
  Mode mode = Mode::off;
  std::uint64_t operations = 0;

  bool enabled() const { return mode != Mode::off; }
  bool operator==(const PowerCutPlan&) const = default;
};
// "off", "every:N", "random:N" (N >= 1).
Result<PowerCutPlan> parse_power_cut(std::string_view text);
std::string power_cut_text(const PowerCutPlan& plan);

// One key of the table: its name, a hint of its values for --help, what it means, and whether
// it is an on/off switch (a command-line flag).
struct ConfigKey {
  std::string_view name;
  std::string_view value_hint;
  std::string_view help;
  bool is_flag = false;
};

struct SimConfig {
  // 1 MiB of device RAM, shared by TreeFTL.
  static RamOptions default_ram() {
    RamOptions options;
    options.budget_bytes = 1 << 20;
    return options;
  }

  // ---- the chip
  std::uint32_t page_size_bytes = Geometry::kDefaultPageSizeBytes;  // page-size
  std::uint32_t pages_per_block = Geometry::kDefaultPagesPerBlock;  // pages-per-block
  std::uint32_t oob_size_bytes = Geometry::kDefaultOobSizeBytes;    // oob-size
  LatencyPreset latency = LatencyPreset::slc;                       // latency
  Backend backend = Backend::metadata;                              // backend
  std::uint64_t chip_size_bytes = 0;  // size; 0 = auto (sized from the trace's compacted span)
  double utilization = 0.9;           // utilization: compacted span / logical space, for auto size

  // ---- the FTL
  std::uint16_t overprovision_permille = 70;                    // op, given in percent
  format::MappingScheme mapping = format::MappingScheme::cftl;  // mapping
  format::GcPolicy gc = format::GcPolicy::dual_greedy;          // gc
  ConsolidationMode consolidation = ConsolidationMode::gc;      // consolidation: CFTL's page->block copies
  RamOptions ram = default_ram();               // ram, ram-policy, aps-interval, aps-tune-unit
  std::uint64_t checkpoint_interval_pages = 0;  // checkpoint-interval; 0 = automatic

  // ---- the replay
  bool prefill = true;                           // prefill: write the whole logical space before the trace
  double age_factor = 1.0;                       // age: then FACTOR x logical pages in random runs
  std::uint32_t repeat = 1;                      // repeat: passes over the trace, all measured
  bool closed_loop = false;                      // closed-loop: ignore arrival times
  double time_scale = 1.0;                       // time-scale: arrival times are multiplied by it
  std::uint64_t flush_every_requests = 0;        // flush-every: Ftl::flush() every N requests; 0 = never
  ChunkOrder chunk_order = ChunkOrder::address;  // compaction
  std::uint32_t chunk_pages_asked = 0;           // chunk-pages: compaction chunk; 0 = one block
  std::uint64_t seed = 1;                        // seed: aging, power cuts, and synthetic workloads that name none
  PowerCutPlan power_cut;                        // power-cut: torture mode (needs backend=memory)

  // Parses `value` into the field `key` names, leaving the config unchanged on error.
  Status set(std::string_view key, std::string_view value);
  // The value of `key` in the spelling set() reads ("4K", "dual-greedy", "on"), or not_found.
  Result<std::string> get(std::string_view key) const;
  // Every key, in the order tools print them.
  static std::span<const ConfigKey> keys();
  static bool has_key(std::string_view key);

  // Pages per compaction chunk on a chip of `geometry`'s shape.
  std::uint32_t chunk_pages(const Geometry& geometry) const {
    return chunk_pages_asked == 0 ? geometry.pages_per_block : chunk_pages_asked;
  }
  // The chip shape with `block_count` blocks (not validated).
  Geometry geometry(std::uint64_t block_count) const;
  LatencyProfile latency_profile() const { return LatencyProfile::of(latency); }
  FtlOptions ftl_options() const;
  // The checks that involve several fields: page, OOB and block sizes together.
  Status validate() const;
};

}  // namespace flashdir::sim
