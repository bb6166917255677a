// load_trace / parse_trace: line by line through the format's parser, then the device layout
// and the summary. One pass, requests stored once: loading is bounded by parsing speed.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <set>

#include "arrival_clock.h"
#include "line_reader.h"
#include "text_fields.h"
#include "trace_layout.h"
#include "trace_record.h"

namespace flashdir::sim {
namespace {

using LineParser = Result<detail::TraceRecord> (*)(std::string_view);

LineParser parser_for(TraceFormat format) {
  switch (format) {
    case TraceFormat::disksim: return detail::parse_disksim_line;
    case TraceFormat::spc: return detail::parse_spc_line;
    case TraceFormat::msr: return detail::parse_msr_line;
    case TraceFormat::automatic: break;
  }
  return nullptr;
}

double time_unit_ns(TraceFormat format, const TraceOptions& options) {
  switch (format) {
    case TraceFormat::disksim: return options.disksim_time_unit_ns;
    case TraceFormat::spc: return detail::kSpcTimeUnitNs;
    case TraceFormat::msr: return detail::kMsrTimeUnitNs;
    case TraceFormat::automatic: break;
  }
  return 0;
}

Status validate(const TraceOptions& options) {
  if (!std::isfinite(options.disksim_time_unit_ns) || options.disksim_time_unit_ns <= 0) {
    return Status::invalid_argument(fmt::format(
        "DiskSim time unit {} ns is not a positive number", options.disksim_time_unit_ns));
  }
  return Status::ok();
}

std::string list_devices(const std::set<std::uint32_t>& devices) {
  std::string text;
  for (std::uint32_t device : devices) {
    if (!text.empty()) text += ", ";
    text += std::to_string(device);
  }
  return text;
}

}  // namespace

Result<Trace> parse_trace(std::istream& in, std::string_view name, const TraceOptions& options) {
  FLASHDIR_TRY(validate(options));
  Trace trace;
  trace.source = std::string(name);
  detail::LineReader reader(in);
  auto at_line = [&](const Status& status) {
    return status.with_context(fmt::format("{}:{}", name, reader.line_number()));
  };

  TraceFormat format = options.format;
  LineParser parse = nullptr;
  std::optional<detail::ArrivalClock> clock;
  std::set<std::uint32_t> other_devices;  // seen while only_device has not occurred: for the message
  while (const auto line = reader.next()) {
    if (detail::has_binary_bytes(*line)) {
      return at_line(Status::invalid_argument(
          fmt::format("not a text trace: the line holds binary bytes: '{}'", detail::excerpt(*line))));
    }
    if (detail::is_blank_or_comment(*line)) continue;
    if (parse == nullptr) {
      if (format == TraceFormat::automatic) {
        auto detected = detail::detect_trace_format(*line);
        if (!detected.is_ok()) return at_line(detected.status());
        format = *detected;
      }
      parse = parser_for(format);
      clock.emplace(time_unit_ns(format, options));
    }
    auto record = parse(*line);
    if (!record.is_ok()) return at_line(record.status());
    // Filtered before the clock sees it, so that the kept device's first request is time 0.
    if (options.only_device && record->device != *options.only_device) {
      if (trace.requests.empty()) other_devices.insert(record->device);
      continue;
    }
    auto arrival = clock->arrival_ns(record->time);
    if (!arrival.is_ok()) return at_line(arrival.status());
    trace.requests.push_back(IoRequest{*arrival, record->op, record->device, record->offset_bytes,
                                       record->size_bytes});
  }
  if (!reader.status().is_ok()) return reader.status().with_context(std::string(name));

  if (trace.requests.empty()) {
    if (options.only_device && !other_devices.empty()) {
      return Status::invalid_argument(
          fmt::format("{}: device {} does not occur in the trace (it has devices {})", name,
                      *options.only_device, list_devices(other_devices)));
    }
    return Status::invalid_argument(fmt::format("{}: the trace holds no requests", name));
  }
  trace.format = trace_format_name(format);
  trace.clamped_arrivals = clock->clamped_count();
  FLASHDIR_TRY(detail::lay_out_devices(trace, options.fold_devices && !options.only_device));
  detail::summarise(trace);
  return trace;
}

Result<Trace> load_trace(const std::filesystem::path& path, const TraceOptions& options) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return Status::invalid_argument(fmt::format("trace '{}' is a directory", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int saved_errno = errno;
    if (!std::filesystem::exists(path, error)) {
      return Status::not_found(fmt::format("trace '{}' does not exist", path.string()));
    }
    return Status::io_error(
        fmt::format("cannot open trace '{}': {}", path.string(), std::strerror(saved_errno)));
  }
  return parse_trace(in, path.string(), options);
}

}  // namespace flashdir::sim
