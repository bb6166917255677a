// The human report: a header of options and inputs, then a table with one column per
// configuration.
#include <fmt/format.h>
#include <algorithm>
#include <functional>
#include <map>

#include "flashdir/sim/report.h"
#include "flashdir/size.h"

namespace flashdir::sim {
namespace {

constexpr std::size_t kLineWidth = 100;
constexpr std::size_t kTableWidth = 120;  // wider tables wrap into several
constexpr std::size_t kHeaderIndent = 11;  // "footprint  "

std::string duration_text(std::uint64_t ns) {
  const auto v = static_cast<double>(ns);
  if (ns < 1'000) return fmt::format("{} ns", ns);
  if (ns < 1'000'000) return fmt::format("{:.1f} us", v / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

std::string ratio_text(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? "-" : fmt::format("{:.2f}%", 100.0 * FtlStats::ratio(part, whole));
}

std::string rate_text(double per_second) {
  if (per_second >= 1e6) return fmt::format("{:.2f} M", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.1f} K", per_second / 1e3);
  return fmt::format("{:.0f}", per_second);
}

// "label     words words ...", wrapped at kLineWidth under the first word.
void add_wrapped(std::string& out, std::string_view label, const std::vector<std::string>& words) {
  std::string line = fmt::format("{:<{}}", label, kHeaderIndent);
  bool first = true;
  for (const std::string& word : words) {
    if (!first && line.size() + 1 + word.size() > kLineWidth) {
      out += line + "\n";
      line = std::string(kHeaderIndent, ' ');
      first = true;
    }
    line += (first ? "" : " ") + word;
    first = false;
  }
  out += line + "\n";
}

void add_line(std::string& out, std::string_view label, const std::string& text) {
  out += fmt::format("{:<{}}{}\n", label, kHeaderIndent, text);
}

std::string input_text(const InputDescription& input) {
  if (input.synthetic) return "synthetic " + input.source;
  std::string text = fmt::format("trace {} (format {}", input.source, input.format);
  if (input.format == "auto" || input.format == "disksim")
    text += fmt::format(", DiskSim time unit {} ns", input.time_unit_ns);
  text += input.device ? fmt::format(", device {} only)", *input.device) : std::string(", all devices)");
  return text;
}

std::string footprint_text(const FootprintSummary& f) {
  const std::uint64_t chunk_bytes = std::uint64_t{f.page_size_bytes} * f.pages_per_chunk;
  return fmt::format("span {} chunks of {} = {} pages, {} ({} B pages, {} order); {} pages touched ({}); {} "
                     "requests cut",
                     f.chunk_count, format_size(chunk_bytes), f.footprint_pages, format_size(f.chunk_count * chunk_bytes),
                     f.page_size_bytes, chunk_order_name(f.order), f.touched_pages,
                     format_size(f.touched_pages * f.page_size_bytes), f.cut_requests);
}

std::string chip_text(const ConfigurationReport& c) {
  return fmt::format("{}; {} logical pages ({}); utilization {:.3f} (span / logical)", c.geometry.describe(), c.logical_pages,
                     format_size(c.logical_pages * c.geometry.page_size_bytes), c.utilization);
}

// A row of the table: its name and how to print one configuration's cell.
struct Row {
  std::string name;
  std::function<std::string(const ConfigurationReport&, const RunResult&)> cell;
};

std::vector<Row> table_rows() {
  using C = const ConfigurationReport&;
  using R = const RunResult&;
  auto count = [](std::uint64_t FtlStats::*field) {
    return [field](C, R r) { return std::to_string(r.stats.*field); };
  };
  auto spread = [](const EraseSpread& e) { return fmt::format("{} / {:.2f} / {}", e.min, e.mean, e.max); };
  return {
      {"chip",
       [](C c, R) {
         return fmt::format("{} x {}", c.geometry.block_count, format_size(c.geometry.block_size_bytes()));
       }},
      {"logical pages", [](C c, R) { return std::to_string(c.logical_pages); }},
      {"utilization", [](C c, R) { return fmt::format("{:.3f}", c.utilization); }},
      {"arrivals", [](C, R r) { return std::string(r.closed_loop ? "closed loop" : "open loop"); }},
      {"requests", [](C, R r) { return std::to_string(r.requests); }},
      {"  reads / writes", [](C, R r) { return fmt::format("{} / {}", r.reads, r.writes); }},
      {"read pages", count(&FtlStats::read_pages)},
      {"write pages", count(&FtlStats::write_pages)},
      {"chip reads", count(&FtlStats::chip_page_reads)},
      {"chip programs", count(&FtlStats::chip_page_programs)},
      {"chip erases", count(&FtlStats::chip_block_erases)},
      {"GC runs", count(&FtlStats::gc_runs)},
      {"GC copies (data + translation)",
       [](C, R r) { return fmt::format("{} + {}", r.stats.gc_data_copies, r.stats.gc_translation_copies); }},
      {"write amplification",
       [](C, R r) {
         return r.stats.write_pages == 0 ? std::string("-")
                                         : fmt::format("{:.3f}", r.stats.write_amplification());
       }},
      // Next to the hit ratio, which counts host lookups: the translation-page I/O the host's
      // lookups and writes cause, apart from what GC's relocations cause (doc/sim.md).
      {"translation page reads host / GC",
       [](C, R r) {
         return fmt::format("{} / {}", r.stats.translation_page_reads - r.stats.gc_translation_page_reads,
                            r.stats.gc_translation_page_reads);
       }},
      {"translation page writes host / GC",
       [](C, R r) {
         return fmt::format("{} / {}", r.stats.translation_page_writes - r.stats.gc_translation_page_writes,
                            r.stats.gc_translation_page_writes);
       }},
      {"mapping hit ratio", [](C, R r) { return ratio_text(r.stats.mapping_hits, r.stats.mapping_lookups); }},
      {"  reads / writes",
       [](C, R r) {
         return ratio_text(r.stats.mapping_read_hits, r.stats.mapping_read_lookups) + " / " +
                ratio_text(r.stats.mapping_write_hits, r.stats.mapping_write_lookups);
       }},
      {"buffer hit ratio reads / writes",
       [](C, R r) {
         return ratio_text(r.stats.buffer_read_hits, r.stats.buffer_read_lookups) + " / " +
                ratio_text(r.stats.buffer_write_hits, r.stats.buffer_write_lookups);
       }},
      {"RAM mapping used mean / partition end",
       [](C, R r) {
         const double end = r.mapping_partition.empty() ? 0.0 : r.mapping_partition.back().second;
         return fmt::format("{:.1f}% / {:.1f}%", 100 * r.stats.mean_mapping_share(), 100 * end);
       }},
      {"RAM peak mapping / buffer",
       [](C, R r) {
         return format_size(r.stats.ram_peak_mapping_bytes) + " / " + format_size(r.stats.ram_peak_buffer_bytes);
       }},
      {"evicted data / entries / TPs",
       [](C, R r) {
         return fmt::format("{} / {} / {}", r.stats.evicted_data_pages, r.stats.evicted_mapping_entries,
                            r.stats.evicted_translation_pages);
       }},
      {"bypassed write pages", count(&FtlStats::bypass_write_pages)},
      {"APS repartitions", count(&FtlStats::aps_repartitions)},
      {"CBMT hit ratio", [](C, R r) { return ratio_text(r.stats.cbmt_hits, r.stats.cbmt_lookups); }},
      {"conversions to block / to page",
       [](C, R r) {
         return fmt::format("{} / {}", r.stats.conversions_to_block, r.stats.conversions_to_page);
       }},
      {"erases per block min/mean/max", [spread](C, R r) { return spread(r.replay_erases); }},
      {"  since format", [spread](C, R r) { return spread(r.end_erases); }},
      {"mean service (us)", [](C, R r) { return fmt::format("{:.2f}", r.mean_service_us()); }},
      {"mean response (us)", [](C, R r) { return fmt::format("{:.2f}", r.mean_response_us()); }},
      {"max response (us)",
       [](C, R r) { return fmt::format("{:.2f}", static_cast<double>(r.response_ns_max) / 1e3); }},
      {"service time: chip / RAM",
       [](C, R r) { return duration_text(r.stats.chip_busy_ns) + " / " + duration_text(r.stats.ram_ns); }},
      {"simulated time", [](C, R r) { return duration_text(r.simulated_ns); }},
      {"sim speed, replay (req/s)", [](C, R r) { return rate_text(r.replay_requests_per_second()); }},
      {"sim speed, whole run (req/s)", [](C, R r) { return rate_text(r.total_requests_per_second()); }},
  };
}

}  // namespace

std::string format_header(const SimulationReport& report) {
  std::string out;
  add_line(out, "seed", std::to_string(report.base.seed));
  add_line(out, "input", input_text(report.input));
  std::vector<std::string> options;
  for (const ConfigKey& key : SimConfig::keys()) {
    options.push_back(fmt::format("{}={}", key.name, report.base.get(key.name).value()));
  }
  add_wrapped(out, "options", options);
  if (!report.axes.empty()) {
    std::vector<std::string> axes;
    for (const CompareAxis& axis : report.axes) {
      std::string values;
      for (const std::string& v : axis.values) values += (values.empty() ? "" : ",") + v;
      axes.push_back(axis.key + "=" + values);
    }
    axes.push_back(fmt::format("({} configurations)", report.configurations.size()));
    add_wrapped(out, "compare", axes);
  }

  const TraceSummary& t = report.trace;
  add_line(out, "trace",
           fmt::format(
               "{}: {} requests, {} reads ({}), {} writes ({}); {} device{}; arrivals over {}; loaded in {}",
               t.format, t.requests, t.reads, format_size(t.read_bytes), t.writes, format_size(t.write_bytes),
               t.devices, t.devices == 1 ? "" : "s", duration_text(t.duration_ns),
               duration_text(static_cast<std::uint64_t>(t.load_seconds * 1e9))));
  if (t.clamped_arrivals != 0) {
    add_line(out, "",
             fmt::format("{} arrival times were earlier than their predecessor's and were moved up to it",
                         t.clamped_arrivals));
  }
  for (const FootprintSummary& f : report.footprints) add_line(out, "footprint", footprint_text(f));

  // Each distinct chip once, with the configurations on it when they differ.
  std::map<std::string, std::vector<std::string>> chips;
  std::vector<std::string> order;
  for (const ConfigurationReport& c : report.configurations) {
    const std::string text = chip_text(c);
    auto [it, inserted] = chips.try_emplace(text);
    if (inserted) order.push_back(text);
    it->second.push_back(c.variant.label());
  }
  for (const std::string& text : order) {
    std::string line = text;
    if (chips.size() > 1) {
      std::string labels;
      for (const std::string& label : chips[text]) labels += (labels.empty() ? "" : ", ") + label;
      line += " [" + labels + "]";
    }
    add_line(out, "chip", line);
  }
  add_line(out, "memory",
           fmt::format("{} estimated (compacted traces and the largest run; --max-memory bounds it)",
                       format_size(report.memory_estimate_bytes)));
  return out;
}

namespace {

// Columns [first, last) of the table, with the row names.
void add_table(std::string& out, const std::vector<Row>& rows, const std::vector<const ConfigurationReport*>& columns,
               const std::vector<std::vector<std::string>>& cells, const std::vector<std::size_t>& width,
               std::size_t name_width, std::size_t first, std::size_t last) {
  out += fmt::format("{:<{}}", "", name_width);
  for (std::size_t j = first; j < last; ++j) out += fmt::format("  {:>{}}", columns[j]->variant.label(), width[j]);
  out += "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += fmt::format("{:<{}}", rows[i].name, name_width);
    for (std::size_t j = first; j < last; ++j) out += fmt::format("  {:>{}}", cells[i][j], width[j]);
    out += "\n";
  }
}

void add_verdict(std::string& out, const SimulationReport& report, const ConfigurationReport& c,
                 const PowerCutVerdict& v) {
  std::string line = fmt::format("{} power cuts survived ({} during recovery); {} violation{}; {} LPNs checked "
                                 "after cuts, {} read pages between them",
                                 v.cuts, v.recovery_cuts, v.violation_count, v.violation_count == 1 ? "" : "s",
                                 v.checked_lpns, v.checked_read_pages);
  if (v.stopped) line += "; the replay stopped: recovery failed";
  add_line(out, "verdict", fmt::format("[{}] {}", c.variant.label(), line));
  const std::string command = reproduce_command(report.input, c.variant.config);
  for (const PowerCutVerdict::Violation& violation : v.violations) {
    add_line(out, "", fmt::format("violation after cut {} (seed {}): {}; reproduce: {}", violation.cut,
                                  c.variant.config.seed, violation.what, command));
  }
  if (v.violation_count > v.violations.size()) {
    add_line(out, "", fmt::format("... and {} more", v.violation_count - v.violations.size()));
  }
}

}  // namespace

std::string format_table(const SimulationReport& report) {
  std::vector<const ConfigurationReport*> columns;
  for (const ConfigurationReport& c : report.configurations) {
    if (c.result) columns.push_back(&c);
  }
  const std::vector<Row> rows = table_rows();
  std::vector<std::vector<std::string>> cells(rows.size(), std::vector<std::string>(columns.size()));
  std::vector<std::size_t> width(columns.size());
  std::size_t name_width = 0;
  for (std::size_t j = 0; j < columns.size(); ++j) width[j] = columns[j]->variant.label().size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    name_width = std::max(name_width, rows[i].name.size());
    for (std::size_t j = 0; j < columns.size(); ++j) {
      cells[i][j] = rows[i].cell(*columns[j], *columns[j]->result);
      width[j] = std::max(width[j], cells[i][j].size());
    }
  }
  // As many columns per table as fit in a line (at least one).
  std::string out;
  for (std::size_t first = 0; first < columns.size();) {
    std::size_t last = first + 1;
    std::size_t line = name_width + 2 + width[first];
    while (last < columns.size() && line + 2 + width[last] <= kTableWidth) line += 2 + width[last++];
    if (first != 0) out += "\n";
    add_table(out, rows, columns, cells, width, name_width, first, last);
    first = last;
  }
  for (const ConfigurationReport* c : columns) {
    if (c->result->power_cuts) add_verdict(out, report, *c, *c->result->power_cuts);
  }
  return out;
}

}  // namespace flashdir::sim
