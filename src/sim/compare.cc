#include "flashdir/sim/compare.h"

#include <fmt/format.h>
#include <algorithm>

namespace flashdir::sim {

std::string Variant::label() const {
  if (settings.empty()) return "base";
  std::string text;
  for (const auto& [key, value] : settings) text += (text.empty() ? "" : " ") + key + "=" + value;
  return text;
}

Result<CompareAxis> parse_compare_axis(std::string_view text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return Status::invalid_argument(fmt::format("compare '{}': expected KEY=VALUE1,VALUE2,...", text));
  }
  CompareAxis axis;
  axis.key = std::string(text.substr(0, equals));
  if (!SimConfig::has_key(axis.key)) {
    SimConfig probe;
    return probe.set(axis.key, "").with_context(fmt::format("compare '{}'", text));
  }
  std::string_view rest = text.substr(equals + 1);
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view value = rest.substr(0, comma);
    if (value.empty()) return Status::invalid_argument(fmt::format("compare '{}': empty value", text));
    if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end()) {
      return Status::invalid_argument(fmt::format("compare '{}': {} appears twice", text, value));
    }
    SimConfig probe;
    FLASHDIR_TRY(probe.set(axis.key, value).with_context("compare"));
    axis.values.emplace_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return axis;
}

Result<std::vector<Variant>> expand_compare(const SimConfig& base, std::span<const CompareAxis> axes) {
  std::size_t total = 1;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].values.empty()) {
      return Status::invalid_argument(fmt::format("compare {}: no values", axes[i].key));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (axes[j].key == axes[i].key) {
        return Status::invalid_argument(
            fmt::format("compare {}: the key is given twice; list all its values once", axes[i].key));
      }
    }
    total *= axes[i].values.size();
    if (total > kMaxVariants) {
      return Status::invalid_argument(fmt::format("compare: more than {} configurations", kMaxVariants));
    }
  }
  std::vector<Variant> variants;
  variants.reserve(total);
  std::vector<std::size_t> digit(axes.size(), 0);  // the odometer: value index per axis
  for (std::size_t n = 0; n < total; ++n) {
    Variant variant;
    variant.config = base;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const std::string& value = axes[a].values[digit[a]];
      FLASHDIR_TRY(variant.config.set(axes[a].key, value).with_context("compare"));
      variant.settings.emplace_back(axes[a].key, value);
    }
    variants.push_back(std::move(variant));
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++digit[a] < axes[a].values.size()) break;
      digit[a] = 0;
    }
  }
  return variants;
}

}  // namespace flashdir::sim
