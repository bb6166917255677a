// The command-line spelling of a synthetic workload:
//   PATTERN[,KEY=VALUE]...   PATTERN = uniform | zipf[:THETA] | seq | sequential
// e.g. "zipf:0.99,read=0.7,ws=1G,size=4K,count=100000,seed=7".
#include <charconv>
#include <fmt/format.h>

#include "flashdir/size.h"
#include "synthetic_text.h"
#include "text_fields.h"

namespace flashdir::sim {
namespace {

constexpr std::string_view kKeys[] = {"read", "ws", "size", "count", "align", "interarrival", "seed"};

constexpr std::size_t key_index(std::string_view key) {
  std::size_t i = 0;
  while (i < std::size(kKeys) && kKeys[i] != key) ++i;
  return i;  // std::size(kKeys) for an unknown key
}

Result<double> parse_real(std::string_view text, std::string_view what) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return Status::invalid_argument(fmt::format("{} '{}' is not a number", what, detail::excerpt(text)));
  }
  return value;
}

// Decimal, or hexadecimal with 0x: seeds printed by other tools often come in hex.
Result<std::uint64_t> parse_seed(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data() + 2, end, value, 16);
    if (ec != std::errc() || ptr != end) {
      return Status::invalid_argument(fmt::format("invalid seed '{}'", detail::excerpt(text)));
    }
    return value;
  }
  return detail::parse_u64(text, "seed");
}

Status parse_pattern(std::string_view item, SyntheticSpec& spec) {
  const std::size_t colon = item.find(':');
  const std::string_view name = item.substr(0, colon);
  const bool has_parameter = colon != std::string_view::npos;
  if (name == "zipf") {
    spec.pattern = SyntheticSpec::Pattern::zipf;
    if (has_parameter) {
      auto theta = parse_real(item.substr(colon + 1), "zipf theta");
      if (!theta.is_ok()) return theta.status();
      spec.zipf_theta = *theta;
    }
    return Status::ok();
  }
  if (name == "uniform") {
    spec.pattern = SyntheticSpec::Pattern::uniform;
  } else if (name == "seq" || name == "sequential") {
    spec.pattern = SyntheticSpec::Pattern::sequential;
  } else {
    return Status::invalid_argument(fmt::format(
        "unknown pattern '{}' (expected uniform, zipf[:THETA] or seq)", detail::excerpt(name)));
  }
  if (has_parameter) {
    return Status::invalid_argument(fmt::format("pattern '{}' takes no parameter", name));
  }
  return Status::ok();
}

Status parse_option(std::string_view key, std::string_view value, SyntheticSpec& spec) {
  auto with_key = [&](const Status& status) {
    return status.with_context(fmt::format("{}={}", key, detail::excerpt(value)));
  };
  auto set_u64 = [&](Result<std::uint64_t> parsed, std::uint64_t& field) {
    if (!parsed.is_ok()) return with_key(parsed.status());
    field = *parsed;
    return Status::ok();
  };
  if (key == "read") {
    auto ratio = parse_real(value, "read ratio");
    if (!ratio.is_ok()) return with_key(ratio.status());
    spec.read_ratio = *ratio;
    return Status::ok();
  }
  if (key == "ws") return set_u64(parse_size(value), spec.working_set_bytes);
  if (key == "size") return set_u64(parse_size(value), spec.request_bytes);
  if (key == "align") return set_u64(parse_size(value), spec.alignment_bytes);
  if (key == "count") return set_u64(detail::parse_u64(value, "request count"), spec.request_count);
  if (key == "interarrival") return set_u64(detail::parse_duration_ns(value), spec.interarrival_ns);
  if (key == "seed") return set_u64(parse_seed(value), spec.seed);
  std::string known;
  for (std::string_view k : kKeys) known += (known.empty() ? "" : ", ") + std::string(k);
  return Status::invalid_argument(
      fmt::format("unknown option '{}' (expected one of {})", detail::excerpt(key), known));
}

Result<SyntheticSpec> parse_items(std::string_view text) {
  SyntheticSpec spec;
  const detail::Fields items = detail::split_commas(text);
  if (items.count > detail::Fields::kMaxFields) {
    return Status::invalid_argument(fmt::format("{} items is too many", items.count));
  }
  if (items[0].empty()) {
    return Status::invalid_argument(
        "no pattern (expected e.g. 'zipf:0.99,ws=1G,count=100000')");
  }
  FLASHDIR_TRY(parse_pattern(items[0], spec));
  bool seen[std::size(kKeys)] = {};
  for (std::size_t i = 1; i < items.count; ++i) {
    const std::string_view item = items[i];
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      return Status::invalid_argument(
          fmt::format("option '{}' is not KEY=VALUE", detail::excerpt(item)));
    }
    const std::string_view key = detail::trim(item.substr(0, equals));
    const std::string_view value = detail::trim(item.substr(equals + 1));
    const std::size_t k = key_index(key);
    if (k < std::size(kKeys)) {
      if (seen[k]) return Status::invalid_argument(fmt::format("option '{}' is given twice", key));
      seen[k] = true;
    }
    FLASHDIR_TRY(parse_option(key, value, spec));
  }
  // No default could be right for these two: they set the size and the length of the run.
  if (!seen[key_index("ws")]) return Status::invalid_argument("missing ws=SIZE (the working set)");
  if (!seen[key_index("count")]) return Status::invalid_argument("missing count=N (the number of requests)");
  FLASHDIR_TRY(validate(spec));
  return spec;
}

}  // namespace

Result<SyntheticSpec> parse_synthetic(std::string_view text) {
  auto spec = parse_items(detail::trim(text));
  if (!spec.is_ok()) {
    return spec.status().with_context(
        fmt::format("synthetic workload '{}'", detail::excerpt(detail::trim(text), 80)));
  }
  return spec;
}

}  // namespace flashdir::sim
