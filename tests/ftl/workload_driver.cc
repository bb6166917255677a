#include "workload_driver.h"

#include <algorithm>
#include <optional>
#include <cmath>
#include <numeric>

namespace flashdir::testing {

const char* pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::uniform: return "uniform";
    case Pattern::zipf: return "zipf";
    case Pattern::sequential: return "sequential";
  }
  return "?";
}

LpnPicker::LpnPicker(Pattern pattern, std::uint64_t logical_pages, SeededRandom& random)
    : pattern_(pattern), pages_(logical_pages), random_(random) {
  if (pattern != Pattern::zipf) return;
  cdf_.resize(pages_);
  double sum = 0;
  for (std::uint64_t rank = 0; rank < pages_; ++rank) {
    sum += 1.0 / std::pow(static_cast<double>(rank + 1), 0.99);
    cdf_[rank] = sum;
  }
  for (auto& c : cdf_) c /= sum;
  permute_.resize(pages_);
  std::iota(permute_.begin(), permute_.end(), 0);
  for (std::uint64_t i = pages_ - 1; i > 0; --i) std::swap(permute_[i], permute_[random_.uniform(i + 1)]);
}

std::uint64_t LpnPicker::next(std::uint32_t run_length) {
  const std::uint64_t room = pages_ - run_length + 1;
  switch (pattern_) {
    case Pattern::uniform: return random_.uniform(room);
    case Pattern::zipf: {
      const auto rank = static_cast<std::uint64_t>(std::lower_bound(cdf_.begin(), cdf_.end(), random_.unit()) - cdf_.begin());
      return std::min(permute_[std::min(rank, pages_ - 1)], room - 1);
    }
    case Pattern::sequential: {
      if (cursor_ >= room) cursor_ = 0;
      const std::uint64_t lpn = cursor_;
      cursor_ += run_length;
      return lpn;
    }
  }
  return 0;
}

void Oracle::wrote(std::uint64_t first, std::uint32_t count, std::uint64_t version) {
  for (std::uint64_t l = first; l < first + count; ++l) lpns_[l].events.push_back({false, version, false});
}

void Oracle::trimmed(std::uint64_t first, std::uint32_t count) {
  for (std::uint64_t l = first; l < first + count; ++l) lpns_[l].events.push_back({true, 0, false});
}

void Oracle::flushed() {
  for (auto& o : lpns_) {
    for (auto& e : o.events) e.durable = true;
  }
}

void Oracle::in_flight_write(std::uint64_t first, std::uint32_t count, std::uint64_t version) {
  for (std::uint64_t l = first; l < first + count; ++l) lpns_[l].in_flight = version;
}

void Oracle::in_flight_trim(std::uint64_t first, std::uint32_t count) {
  for (std::uint64_t l = first; l < first + count; ++l) lpns_[l].trim_in_flight = true;
}

bool Oracle::allows(std::uint64_t lpn, std::uint64_t version_read, std::uint64_t durable) const {
  const LpnState& o = lpns_[lpn];
  if (o.in_flight && version_read == *o.in_flight) return true;
  if (o.trim_in_flight && version_read == 0) return true;
  // The floor is the newest durable event; anything acknowledged after it may also show.
  std::uint64_t floor = o.settled;
  std::vector<std::uint64_t> maybe;
  for (const Event& e : o.events) {
    const bool is_durable = e.trim ? e.durable : e.version <= durable;
    const std::uint64_t value = e.trim ? 0 : e.version;
    if (is_durable) {
      floor = value;
      maybe.clear();
    } else {
      maybe.push_back(value);
    }
  }
  return version_read == floor || std::find(maybe.begin(), maybe.end(), version_read) != maybe.end();
}

std::string Oracle::describe(std::uint64_t lpn) const {
  const LpnState& o = lpns_[lpn];
  std::string text = "settled " + std::to_string(o.settled);
  for (const Event& e : o.events) {
    text += e.trim ? (e.durable ? "; trim (durable)" : "; trim") : "; write " + std::to_string(e.version);
  }
  if (o.in_flight) text += "; in flight " + std::to_string(*o.in_flight);
  if (o.trim_in_flight) text += "; trim in flight";
  return text;
}

void Oracle::settle(std::uint64_t lpn, std::uint64_t version_read) { lpns_[lpn] = LpnState{version_read, {}, std::nullopt, false}; }

std::uint64_t Oracle::expected(std::uint64_t lpn) const {
  const LpnState& o = lpns_[lpn];
  if (o.events.empty()) return o.settled;
  return o.events.back().trim ? 0 : o.events.back().version;
}

}  // namespace flashdir::testing
