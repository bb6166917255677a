// The report as one JSON document (--json): the same content as the human report, numbers as
// numbers, undefined ratios as null.
#include <nlohmann/json.hpp>

#include "flashdir/sim/report.h"

namespace flashdir::sim {
namespace {

using nlohmann::json;

json ratio(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? json(nullptr) : json(FtlStats::ratio(part, whole));
}

json spread(const EraseSpread& e) {
  return {{"min", e.min}, {"mean", e.mean}, {"max", e.max}};
}

json stats_json(const FtlStats& s) {
  return {
      {"read_requests", s.read_requests},
      {"write_requests", s.write_requests},
      {"trim_requests", s.trim_requests},
      {"read_pages", s.read_pages},
      {"write_pages", s.write_pages},
      {"trim_pages", s.trim_pages},
      {"hot_write_pages", s.hot_write_pages},
      {"chip_page_reads", s.chip_page_reads},
      {"chip_page_programs", s.chip_page_programs},
      {"chip_block_erases", s.chip_block_erases},
      {"chip_busy_ns", s.chip_busy_ns},
      {"gc_runs", s.gc_runs},
      {"gc_data_copies", s.gc_data_copies},
      {"gc_translation_copies", s.gc_translation_copies},
      {"translation_page_reads", s.translation_page_reads},
      {"translation_page_writes", s.translation_page_writes},
      {"gc_translation_page_reads", s.gc_translation_page_reads},
      {"gc_translation_page_writes", s.gc_translation_page_writes},
      {"mapping_lookups", s.mapping_lookups},
      {"mapping_hits", s.mapping_hits},
      {"mapping_read_lookups", s.mapping_read_lookups},
      {"mapping_read_hits", s.mapping_read_hits},
      {"mapping_write_lookups", s.mapping_write_lookups},
      {"mapping_write_hits", s.mapping_write_hits},
      {"cbmt_lookups", s.cbmt_lookups},
      {"cbmt_hits", s.cbmt_hits},
      {"conversions_to_block", s.conversions_to_block},
      {"conversions_to_page", s.conversions_to_page},
      {"consolidation_copies", s.consolidation_copies},
      {"buffer_read_lookups", s.buffer_read_lookups},
      {"buffer_read_hits", s.buffer_read_hits},
      {"buffer_write_lookups", s.buffer_write_lookups},
      {"buffer_write_hits", s.buffer_write_hits},
      {"bypass_write_pages", s.bypass_write_pages},
      {"forced_write_pages", s.forced_write_pages},
      {"forced_program_pages", s.forced_program_pages},
      {"evicted_data_pages", s.evicted_data_pages},
      {"evicted_mapping_entries", s.evicted_mapping_entries},
      {"evicted_translation_pages", s.evicted_translation_pages},
      {"ram_page_ops", s.ram_page_ops},
      {"ram_ns", s.ram_ns},
      {"ram_budget_bytes", s.ram_budget_bytes},
      {"ram_peak_mapping_bytes", s.ram_peak_mapping_bytes},
      {"ram_peak_buffer_bytes", s.ram_peak_buffer_bytes},
      {"ram_mapping_share_sum", s.ram_mapping_share_sum},
      {"aps_repartitions", s.aps_repartitions},
      {"checkpoints", s.checkpoints},
      {"checkpoint_pages", s.checkpoint_pages},
      {"service_ns", s.service_ns},
      {"free_blocks", s.free_blocks},
  };
}

json geometry_json(const Geometry& g) {
  return {{"describe", g.describe()},
          {"capacity_bytes", g.capacity_bytes()},
          {"page_size_bytes", g.page_size_bytes},
          {"oob_size_bytes", g.oob_size_bytes},
          {"pages_per_block", g.pages_per_block},
          {"block_count", g.block_count}};
}

json power_cuts_json(const InputDescription& input, const SimConfig& config, const PowerCutVerdict& v) {
  json violations = json::array();
  for (const PowerCutVerdict::Violation& violation : v.violations) {
    violations.push_back({{"after_cut", violation.cut}, {"what", violation.what}});
  }
  return {{"cuts", v.cuts},
          {"recovery_cuts", v.recovery_cuts},
          {"checked_lpns", v.checked_lpns},
          {"checked_read_pages", v.checked_read_pages},
          {"violation_count", v.violation_count},
          {"violations", violations},
          {"stopped", v.stopped},
          {"seed", config.seed},
          {"reproduce", reproduce_command(input, config)}};
}

json configuration_json(const InputDescription& input, const ConfigurationReport& c) {
  json settings = json::object();
  for (const auto& [key, value] : c.variant.settings) settings[key] = value;
  json out = {
      {"label", c.variant.label()},       {"settings", settings},         {"chip", geometry_json(c.geometry)},
      {"logical_pages", c.logical_pages}, {"utilization", c.utilization}, {"footprint", c.footprint_index},
  };
  if (!c.result) return out;
  const RunResult& r = *c.result;
  out["requests"] = r.requests;
  out["reads"] = r.reads;
  out["writes"] = r.writes;
  out["stats"] = stats_json(r.stats);
  out["write_amplification"] = r.stats.write_pages == 0 ? json(nullptr) : json(r.stats.write_amplification());
  out["mapping_hit_ratio"] = ratio(r.stats.mapping_hits, r.stats.mapping_lookups);
  // The hit ratio counts host lookups; the translation-page I/O splits the same way.
  out["translation_page_reads_host"] = r.stats.translation_page_reads - r.stats.gc_translation_page_reads;
  out["translation_page_reads_gc"] = r.stats.gc_translation_page_reads;
  out["translation_page_writes_host"] = r.stats.translation_page_writes - r.stats.gc_translation_page_writes;
  out["translation_page_writes_gc"] = r.stats.gc_translation_page_writes;
  out["cbmt_hit_ratio"] = ratio(r.stats.cbmt_hits, r.stats.cbmt_lookups);
  out["mapping_read_hit_ratio"] = ratio(r.stats.mapping_read_hits, r.stats.mapping_read_lookups);
  out["mapping_write_hit_ratio"] = ratio(r.stats.mapping_write_hits, r.stats.mapping_write_lookups);
  out["buffer_read_hit_ratio"] = ratio(r.stats.buffer_read_hits, r.stats.buffer_read_lookups);
  out["buffer_write_hit_ratio"] = ratio(r.stats.buffer_write_hits, r.stats.buffer_write_lookups);
  out["mean_mapping_share"] = r.stats.mean_mapping_share();
  out["mapping_partition_series"] = r.mapping_partition;
  out["ram_ns"] = r.stats.ram_ns;
  out["erases_per_block"] = spread(r.replay_erases);
  out["erases_per_block_since_format"] = spread(r.end_erases);
  out["closed_loop"] = r.closed_loop;
  out["mean_service_us"] = r.mean_service_us();
  out["mean_response_us"] = r.mean_response_us();
  out["max_response_us"] = static_cast<double>(r.response_ns_max) / 1e3;
  out["chip_busy_ns"] = r.stats.chip_busy_ns;
  out["simulated_ns"] = r.simulated_ns;
  out["flushes"] = r.flushes;
  out["prefill_requests"] = r.prefill_requests;
  out["aging_requests"] = r.aging_requests;
  out["aging_pages"] = r.aging_pages;
  if (r.power_cuts) out["power_cuts"] = power_cuts_json(input, c.variant.config, *r.power_cuts);
  out["speed"] = {
      {"replay_wall_seconds", r.replay_wall_seconds},
      {"replay_requests_per_second", r.replay_requests_per_second()},
      {"total_wall_seconds", r.total_wall_seconds},
      {"total_requests", r.total_requests},
      {"total_requests_per_second", r.total_requests_per_second()},
  };
  return out;
}

}  // namespace

std::string format_json(const SimulationReport& report) {
  json options = json::object();
  for (const ConfigKey& key : SimConfig::keys())
    options[std::string(key.name)] = report.base.get(key.name).value();
  json compare = json::array();
  for (const CompareAxis& axis : report.axes) compare.push_back({{"key", axis.key}, {"values", axis.values}});

  const InputDescription& in = report.input;
  json input = {{"kind", in.synthetic ? "synthetic" : "trace"}, {"source", in.source}};
  if (!in.synthetic) {
    input["format"] = in.format;
    input["time_unit_ns"] = in.time_unit_ns;
    input["device"] = in.device ? json(*in.device) : json(nullptr);
  }
  const TraceSummary& t = report.trace;
  json trace = {{"source", t.source},
                {"format", t.format},
                {"requests", t.requests},
                {"reads", t.reads},
                {"writes", t.writes},
                {"read_bytes", t.read_bytes},
                {"write_bytes", t.write_bytes},
                {"devices", t.devices},
                {"duration_ns", t.duration_ns},
                {"clamped_arrivals", t.clamped_arrivals},
                {"load_seconds", t.load_seconds}};
  json footprints = json::array();
  for (const FootprintSummary& f : report.footprints) {
    footprints.push_back({{"page_size_bytes", f.page_size_bytes},
                          {"pages_per_chunk", f.pages_per_chunk},
                          {"order", chunk_order_name(f.order)},
                          {"chunks", f.chunk_count},
                          {"footprint_pages", f.footprint_pages},
                          {"touched_pages", f.touched_pages},
                          {"cut_requests", f.cut_requests},
                          {"replay_requests", f.replay_requests},
                          {"max_request_pages", f.max_request_pages}});
  }
  json configurations = json::array();
  for (const ConfigurationReport& c : report.configurations) configurations.push_back(configuration_json(report.input, c));

  json document = {{"seed", report.base.seed},
                   {"input", input},
                   {"options", options},
                   {"compare", compare},
                   {"trace", trace},
                   {"footprints", footprints},
                   {"memory_estimate_bytes", report.memory_estimate_bytes},
                   {"configurations", configurations}};
  return document.dump(2) + "\n";
}

}  // namespace flashdir::sim
