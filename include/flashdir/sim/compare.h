// --compare: the configurations a run compares side by side. Each axis names one SimConfig key
// and its values ("mapping=cftl,dftl,page"); the configurations are the cartesian product of
// the axes applied to the base configuration, in odometer order: the first axis changes
// slowest, the last fastest (mapping=a,b gc=x,y gives a/x, a/y, b/x, b/y).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flashdir/sim/config.h"
#include "flashdir/status.h"

namespace flashdir::sim {

struct CompareAxis {
  std::string key;
  std::vector<std::string> values;
};

// One configuration of the product.
struct Variant {
  // The key=value pairs this variant sets, in axis order (empty without --compare).
  std::vector<std::pair<std::string, std::string>> settings;
  SimConfig config;

  // "mapping=dftl gc=greedy", or "base" without --compare.
  std::string label() const;
};

// "KEY=V1,V2,...": the key must be a SimConfig key and every value valid for it (the message
// names both); values must be distinct.
Result<CompareAxis> parse_compare_axis(std::string_view text);

// The product of `axes` over `base`. A key may appear on one axis only. Without axes: the base
// alone. Refuses products of more than kMaxVariants configurations.
inline constexpr std::size_t kMaxVariants = 4096;
Result<std::vector<Variant>> expand_compare(const SimConfig& base, std::span<const CompareAxis> axes);

}  // namespace flashdir::sim
