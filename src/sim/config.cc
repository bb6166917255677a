// The key table of SimConfig: one entry per field, with its parser and its printer. Adding a
// field means adding one entry here; the command line and --compare pick it up.
#include "flashdir/sim/config.h"

#include <fmt/format.h>
#include <array>
#include <cmath>

#include "flashdir/size.h"
#include "value_text.h"

namespace flashdir::sim {

const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::metadata:
      return "metadata";
    case Backend::memory:
      return "memory";
  }
  return "?";
}

const char* chunk_order_name(ChunkOrder order) {
  switch (order) {
    case ChunkOrder::address:
      return "address";
    case ChunkOrder::first_touch:
      return "first-touch";
  }
  return "?";
}

Result<PowerCutPlan> parse_power_cut(std::string_view text) {
  PowerCutPlan plan;
  if (text == "off") return plan;
  const std::size_t colon = text.find(':');
  const std::string_view mode = text.substr(0, colon);
  if (mode == "every") {
    plan.mode = PowerCutPlan::Mode::every;
  } else if (mode == "random") {
    plan.mode = PowerCutPlan::Mode::random;
  } else {
    return Status::invalid_argument("expected off, every:N or random:N (N chip operations)");
  }
  if (colon == std::string_view::npos) {
    return Status::invalid_argument(fmt::format("{} needs a number of chip operations: {}:N", mode, mode));
  }
  auto operations = value_text::parse_unsigned(text.substr(colon + 1));
  if (!operations.is_ok()) return operations.status();
  if (*operations == 0) return Status::invalid_argument("a power cut needs at least one chip operation between cuts");
  plan.operations = *operations;
  return plan;
}

std::string power_cut_text(const PowerCutPlan& plan) {
  switch (plan.mode) {
    case PowerCutPlan::Mode::off:
      return "off";
    case PowerCutPlan::Mode::every:
      return fmt::format("every:{}", plan.operations);
    case PowerCutPlan::Mode::random:
      return fmt::format("random:{}", plan.operations);
  }
  return "?";
}

namespace {

using value_text::parse_real;
using value_text::parse_switch;
using value_text::parse_unsigned;
using value_text::real_text;
using value_text::size_text;

// A value's parser reports what is wrong without the key; set() adds "key=value: ".
using Setter = Status (*)(SimConfig&, std::string_view);
using Getter = std::string (*)(const SimConfig&);

struct KeyEntry {
  ConfigKey key;
  Setter set;
  Getter get;
};

Result<std::uint32_t> parse_u32_size(std::string_view text) {
  auto value = parse_size(text);
  if (!value.is_ok()) return value.status();
  if (*value > UINT32_MAX) return Status::invalid_argument(fmt::format("'{}' is too large", text));
  return static_cast<std::uint32_t>(*value);
}

// The geometry checks of one field, with the other fields at their defaults.
Status check_shape(std::uint32_t page_size, std::uint32_t oob_size, std::uint32_t pages_per_block) {
  Geometry g;
  g.page_size_bytes = page_size;
  g.oob_size_bytes = oob_size;
  g.pages_per_block = pages_per_block;
  g.block_count = 1;
  return g.validate();
}

Status set_page_size(SimConfig& c, std::string_view text) {
  auto value = parse_u32_size(text);
  if (!value.is_ok()) return value.status();
  FLASHDIR_TRY(check_shape(*value, Geometry::kDefaultOobSizeBytes, Geometry::kDefaultPagesPerBlock));
  c.page_size_bytes = *value;
  return Status::ok();
}

Status set_pages_per_block(SimConfig& c, std::string_view text) {
  auto value = parse_unsigned(text);
  if (!value.is_ok()) return value.status();
  if (*value > UINT32_MAX) return Status::invalid_argument(fmt::format("'{}' is too large", text));
  FLASHDIR_TRY(check_shape(Geometry::kDefaultPageSizeBytes, Geometry::kDefaultOobSizeBytes,
                           static_cast<std::uint32_t>(*value)));
  c.pages_per_block = static_cast<std::uint32_t>(*value);
  return Status::ok();
}

Status set_oob_size(SimConfig& c, std::string_view text) {
  auto value = parse_u32_size(text);
  if (!value.is_ok()) return value.status();
  FLASHDIR_TRY(check_shape(Geometry::kDefaultPageSizeBytes, *value, Geometry::kDefaultPagesPerBlock));
  c.oob_size_bytes = *value;
  return Status::ok();
}

Status set_latency(SimConfig& c, std::string_view text) {
  auto value = LatencyProfile::parse(text);
  if (!value.is_ok()) return value.status();
  c.latency = value->preset;
  return Status::ok();
}

Status set_backend(SimConfig& c, std::string_view text) {
  for (Backend b : {Backend::metadata, Backend::memory}) {
    if (text == backend_name(b)) {
      c.backend = b;
      return Status::ok();
    }
  }
  return Status::invalid_argument(fmt::format("unknown backend '{}' (expected metadata or memory)", text));
}

Status set_size(SimConfig& c, std::string_view text) {
  if (text == "auto") {
    c.chip_size_bytes = 0;
    return Status::ok();
  }
  auto value = parse_size(text);
  if (!value.is_ok()) return value.status();
  if (*value == 0) return Status::invalid_argument("a chip of 0 bytes (use auto to size it from the trace)");
  c.chip_size_bytes = *value;
  return Status::ok();
}

Status set_utilization(SimConfig& c, std::string_view text) {
  auto value = parse_real(text);
  if (!value.is_ok()) return value.status();
  if (!(*value > 0.0 && *value <= 1.0))
    return Status::invalid_argument("utilization must be above 0 and at most 1");
  c.utilization = *value;
  return Status::ok();
}

Status set_op(SimConfig& c, std::string_view text) {
  auto value = parse_real(text);
  if (!value.is_ok()) return value.status();
  const double permille = std::round(*value * 10.0);
  if (!(permille >= 0.0 && permille < 1000.0)) {
    return Status::invalid_argument("over-provisioning must be at least 0 and below 100 percent");
  }
  c.overprovision_permille = static_cast<std::uint16_t>(permille);
  return Status::ok();
}

Status set_mapping(SimConfig& c, std::string_view text) {
  auto value = format::parse_mapping_scheme(text);
  if (!value.is_ok()) return value.status();
  c.mapping = *value;
  return Status::ok();
}

Status set_gc(SimConfig& c, std::string_view text) {
  auto value = format::parse_gc_policy(text);
  if (!value.is_ok()) return value.status();
  c.gc = *value;
  return Status::ok();
}

Status set_ram(SimConfig& c, std::string_view text) {
  auto value = parse_size(text);
  if (!value.is_ok()) return value.status();
  c.ram.budget_bytes = *value;
  return Status::ok();
}

Status set_ram_policy(SimConfig& c, std::string_view text) { return parse_ram_policy(text, c.ram); }

Status set_aps_interval(SimConfig& c, std::string_view text) {
  auto value = parse_unsigned(text);
  if (!value.is_ok()) return value.status();
  if (*value == 0) return Status::invalid_argument("APS needs an interval of at least one request");
  c.ram.aps_interval_requests = *value;
  return Status::ok();
}

Status set_aps_tune_unit(SimConfig& c, std::string_view text) {
  auto value = parse_size(text);
  if (!value.is_ok()) return value.status();
  c.ram.aps_tune_unit_bytes = *value;
  return Status::ok();
}

Status set_checkpoint_interval(SimConfig& c, std::string_view text) {
  auto value = parse_unsigned(text);
  if (!value.is_ok()) return value.status();
  c.checkpoint_interval_pages = *value;
  return Status::ok();
}

Status set_flush_every(SimConfig& c, std::string_view text) {
  auto value = parse_unsigned(text);
  if (!value.is_ok()) return value.status();
  c.flush_every_requests = *value;
  return Status::ok();
}

Status set_consolidation(SimConfig& c, std::string_view text) {
  auto value = parse_consolidation_mode(text);
  if (!value.is_ok()) return value.status();
  c.consolidation = *value;
  return Status::ok();
}

Status set_relocation_log(SimConfig& c, std::string_view text) {
  auto value = parse_switch(text);
  if (!value.is_ok()) return value.status();
  c.ram.tree_relocation_log = *value;
  return Status::ok();
}

Status set_prefill(SimConfig& c, std::string_view text) {
  auto value = parse_switch(text);
  if (!value.is_ok()) return value.status();
  c.prefill = *value;
  return Status::ok();
}

Status set_age(SimConfig& c, std::string_view text) {
  auto value = parse_real(text);
  if (!value.is_ok()) return value.status();
  if (!(*value >= 0.0 && *value <= 1000.0))
    return Status::invalid_argument("the aging factor must be between 0 and 1000");
  c.age_factor = *value;
  return Status::ok();
}

Status set_repeat(SimConfig& c, std::string_view text) {
  auto value = parse_unsigned(text);
  if (!value.is_ok()) return value.status();
  if (*value == 0 || *value > 1'000'000)
    return Status::invalid_argument("repeat must be between 1 and 1000000");
  c.repeat = static_cast<std::uint32_t>(*value);
  return Status::ok();
}

Status set_closed_loop(SimConfig& c, std::string_view text) {
  auto value = parse_switch(text);
  if (!value.is_ok()) return value.status();
  c.closed_loop = *value;
  return Status::ok();
}

Status set_time_scale(SimConfig& c, std::string_view text) {
  auto value = parse_real(text);
  if (!value.is_ok()) return value.status();
  if (!(*value > 0.0 && *value <= 1e6))
    return Status::invalid_argument("the time scale must be above 0 and at most 1e6");
  c.time_scale = *value;
  return Status::ok();
}

Status set_compaction(SimConfig& c, std::string_view text) {
  for (ChunkOrder order : {ChunkOrder::address, ChunkOrder::first_touch}) {
    if (text == chunk_order_name(order)) {
      c.chunk_order = order;
      return Status::ok();
    }
  }
  return Status::invalid_argument(
      fmt::format("unknown chunk order '{}' (expected address or first-touch)", text));
}

Status set_chunk_pages(SimConfig& c, std::string_view text) {
  if (text == "block") {
    c.chunk_pages_asked = 0;
    return Status::ok();
  }
  auto value = parse_unsigned(text);
  if (!value.is_ok()) return value.status();
  if (*value == 0 || *value > UINT32_MAX) {
    return Status::invalid_argument("a chunk holds at least one page (or say block)");
  }
  c.chunk_pages_asked = static_cast<std::uint32_t>(*value);
  return Status::ok();
}

Status set_seed(SimConfig& c, std::string_view text) {
  auto value = parse_unsigned(text);
  if (!value.is_ok()) return value.status();
  c.seed = *value;
  return Status::ok();
}

Status set_power_cut(SimConfig& c, std::string_view text) {
  auto plan = parse_power_cut(text);
  if (!plan.is_ok()) return plan.status();
  c.power_cut = *plan;
  return Status::ok();
}

std::string on_off(bool value) {
  return value ? "on" : "off";
}

const std::array<KeyEntry, 27> kKeys = {{
    {{"page-size", "SIZE", "NAND page size in bytes, a power of two from 512 to 64K", false},
     set_page_size,
     [](const SimConfig& c) { return size_text(c.page_size_bytes); }},
    {{"pages-per-block", "N", "Pages per erase block, 2 to 65536", false},
     set_pages_per_block,
     [](const SimConfig& c) { return std::to_string(c.pages_per_block); }},
    {{"oob-size", "SIZE", "Out-of-band bytes per page, at least 48", false},
     set_oob_size,
     [](const SimConfig& c) { return size_text(c.oob_size_bytes); }},
    {{"latency", "slc|mlc|zero",
      "Latency preset: slc (25/200/1500 us read/program/erase), mlc (50/900/3500 us) or zero", false},
     set_latency,
     [](const SimConfig& c) { return std::string(latency_preset_name(c.latency)); }},
    {{"backend", "metadata|memory",
      "Chip backend: metadata (no host data kept, fast) or memory (every byte kept)", false},
     set_backend,
     [](const SimConfig& c) { return std::string(backend_name(c.backend)); }},
    {{"size", "auto|SIZE",
      "Chip capacity; auto: the smallest chip whose logical space holds the trace's compacted span (see "
      "chunk-pages) at the utilization",
      false},
     set_size,
     [](const SimConfig& c) {
       return c.chip_size_bytes == 0 ? std::string("auto") : size_text(c.chip_size_bytes);
     }},
    {{"utilization", "FRACTION",
      "Compacted span / logical space when sizing the chip automatically, in (0, 1]",
      false},
     set_utilization,
     [](const SimConfig& c) { return real_text(c.utilization); }},
    {{"op", "PERCENT", "Over-provisioning: percent of the data area kept spare, 0 to 99.9", false},
     set_op,
     [](const SimConfig& c) { return real_text(c.overprovision_permille / 10.0); }},
    {{"mapping", "cftl|dftl|page",
      "Mapping scheme: cftl (CPMT + CBMT), dftl (cached page map) or page (whole map in RAM)", false},
     set_mapping,
     [](const SimConfig& c) { return std::string(format::mapping_scheme_name(c.mapping)); }},
    {{"gc", "dual-greedy|greedy|cost-benefit", "Garbage-collection victim policy", false},
     set_gc,
     [](const SimConfig& c) { return std::string(format::gc_policy_name(c.gc)); }},
    {{"consolidation", "off|gc|eager",
      "CFTL: when to copy a read-hot, write-cold logical block into one physical block: off (never; "
      "only blocks found laid out whole are block-mapped), gc (during GC, when the victim holds half of "
      "it) or eager (during GC, and in the background)",
      false},
     set_consolidation,
     [](const SimConfig& c) { return std::string(consolidation_mode_name(c.consolidation)); }},
    {{"ram", "SIZE",
      "Device RAM shared by the mapping cache and the write buffer, bytes (the page scheme's whole map is "
      "free and not counted)",
      false},
     set_ram,
     [](const SimConfig& c) { return size_text(c.ram.budget_bytes); }},
    {{"ram-policy", "tree|stack|aps|static:P",
      "How the RAM is shared: TreeFTL, TreeFTL composed with CFTL's compact mapping and LRU data pages, adaptive "
      "partitioning, or P percent for mapping (static:100 = mapping cache only)",
      false},
     set_ram_policy,
     [](const SimConfig& c) { return ram_policy_label(c.ram); }},
    {{"aps-interval", "REQUESTS", "APS: requests between repartitions", false},
     set_aps_interval,
     [](const SimConfig& c) { return std::to_string(c.ram.aps_interval_requests); }},
    {{"aps-tune-unit", "SIZE", "APS: the smallest step of the split; 0 = 1/256 of the RAM, at least one mapping entry", false},
     set_aps_tune_unit,
     [](const SimConfig& c) { return size_text(c.ram.aps_tune_unit_bytes); }},
    {{"relocation-log", "on|off",
      "tree: GC's moves into uncached translation pages wait in a log, one read-modify-write per page (doc/ram.md)",
      true},
     set_relocation_log,
     [](const SimConfig& c) { return on_off(c.ram.tree_relocation_log); }},
    {{"checkpoint-interval", "PAGES",
      "Pages programmed between checkpoints (taken at flushes, see flush-every); 0 = automatic", false},
     set_checkpoint_interval,
     [](const SimConfig& c) { return std::to_string(c.checkpoint_interval_pages); }},
    {{"flush-every", "N",
      "Flush the FTL every N replayed requests (checkpoints happen at flushes); 0 = never", false},
     set_flush_every,
     [](const SimConfig& c) { return std::to_string(c.flush_every_requests); }},
    {{"prefill", "on|off", "Write the whole logical space sequentially before the trace", true},
     set_prefill,
     [](const SimConfig& c) { return on_off(c.prefill); }},
    {{"age", "FACTOR", "After the prefill, write FACTOR x logical pages in seeded random runs of 1-16 pages",
      false},
     set_age,
     [](const SimConfig& c) { return real_text(c.age_factor); }},
    {{"repeat", "N", "Replay the trace N times (all passes are measured)", false},
     set_repeat,
     [](const SimConfig& c) { return std::to_string(c.repeat); }},
    {{"closed-loop", "on|off", "Ignore arrival times: each request starts when the previous one ends", true},
     set_closed_loop,
     [](const SimConfig& c) { return on_off(c.closed_loop); }},
    {{"time-scale", "FACTOR", "Multiply arrival times by FACTOR (below 1: a faster load)", false},
     set_time_scale,
     [](const SimConfig& c) { return real_text(c.time_scale); }},
    {{"compaction", "address|first-touch",
      "Order of the trace's chunks in the compacted logical space: address (keeps locality) or first-touch",
      false},
     set_compaction,
     [](const SimConfig& c) { return std::string(chunk_order_name(c.chunk_order)); }},
    {{"chunk-pages", "block|N",
      "Compaction chunk in pages: the trace's address space is cut into chunks and only touched ones are "
      "kept; the chip is sized for the chunks (block: one erase block, keeping logical blocks aligned; "
      "smaller: closer to the pages touched)",
      false},
     set_chunk_pages,
     [](const SimConfig& c) {
       return c.chunk_pages_asked == 0 ? std::string("block") : std::to_string(c.chunk_pages_asked);
     }},
    {{"seed", "N", "Seed of the aging writes, the power cuts and synthetic workloads that name none", false},
     set_seed,
     [](const SimConfig& c) { return std::to_string(c.seed); }},
    {{"power-cut", "off|every:N|random:N",
      "Torture mode: cut the power after every N chip operations (or at seeded random ones, 1 in N), "
      "recover, check the durability contract, carry on; needs backend=memory",
      false},
     set_power_cut,
     [](const SimConfig& c) { return power_cut_text(c.power_cut); }},
}};

const KeyEntry* find_key(std::string_view name) {
  for (const KeyEntry& entry : kKeys) {
    if (entry.key.name == name) return &entry;
  }
  return nullptr;
}

std::string key_list() {
  std::string names;
  for (const KeyEntry& entry : kKeys) names += (names.empty() ? "" : ", ") + std::string(entry.key.name);
  return names;
}

}  // namespace

Status SimConfig::set(std::string_view key, std::string_view value) {
  const KeyEntry* entry = find_key(key);
  if (entry == nullptr) {
    return Status::invalid_argument(fmt::format("unknown key '{}' (known keys: {})", key, key_list()));
  }
  SimConfig changed = *this;
  if (Status s = entry->set(changed, value); !s.is_ok()) {
    return Status::invalid_argument(fmt::format("{}={}: {}", key, value, s.message()));
  }
  *this = changed;
  return Status::ok();
}

Result<std::string> SimConfig::get(std::string_view key) const {
  const KeyEntry* entry = find_key(key);
  if (entry == nullptr) return Status::not_found(fmt::format("unknown key '{}'", key));
  return entry->get(*this);
}

std::span<const ConfigKey> SimConfig::keys() {
  static const auto table = [] {
    std::array<ConfigKey, kKeys.size()> keys;
    for (std::size_t i = 0; i < kKeys.size(); ++i) keys[i] = kKeys[i].key;
    return keys;
  }();
  return table;
}

bool SimConfig::has_key(std::string_view key) {
  return find_key(key) != nullptr;
}

Geometry SimConfig::geometry(std::uint64_t block_count) const {
  Geometry g;
  g.page_size_bytes = page_size_bytes;
  g.oob_size_bytes = oob_size_bytes;
  g.pages_per_block = pages_per_block;
  g.block_count = block_count;
  return g;
}

FtlOptions SimConfig::ftl_options() const {
  FtlOptions options;
  options.mapping = mapping;
  options.gc = gc;
  options.overprovision_permille = overprovision_permille;
  options.ram = ram;
  options.checkpoint_interval_pages = checkpoint_interval_pages;
  options.cftl.consolidation = consolidation;
  return options;
}

Status SimConfig::validate() const {
  if (Status s = check_shape(page_size_bytes, oob_size_bytes, pages_per_block); !s.is_ok()) {
    return Status::invalid_argument(fmt::format("page-size={} oob-size={} pages-per-block={}: {}",
                                                size_text(page_size_bytes), size_text(oob_size_bytes),
                                                pages_per_block, s.message()));
  }
  if (chunk_pages_asked > pages_per_block) {
    return Status::invalid_argument(fmt::format("chunk-pages={}: a chunk is at most a block ({} pages)",
                                                chunk_pages_asked, pages_per_block));
  }
  // A mapping cache needs room for at least one page of entries: below that, CFTL and DFTL
  // would keep translations in RAM the budget does not count. The page scheme's map is free,
  // so for it 0 means a device without a write buffer.
  if (ram.budget_bytes < page_size_bytes && mapping != format::MappingScheme::page) {
    return Status::invalid_argument(fmt::format(
        "ram={}: {} keeps its mapping cache in the device RAM, which must hold at least one page ({}); "
        "only mapping=page (whole map free) runs without device RAM",
        size_text(ram.budget_bytes), format::mapping_scheme_name(mapping), size_text(page_size_bytes)));
  }
  if (power_cut.enabled() && backend != Backend::memory) {
    return Status::invalid_argument(fmt::format(
        "power-cut={} needs backend=memory: the oracle reads every page's contents back after a cut",
        power_cut_text(power_cut)));
  }
  return ftl_options().validate();
}

}  // namespace flashdir::sim
