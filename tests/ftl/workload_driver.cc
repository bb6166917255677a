#include "workload_driver.h"

#include <algorithm>
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
  for (std::uint64_t l = first; l < first + count; ++l) lpns_[l] = LpnOracle{version, false, false, std::nullopt};
}

void Oracle::trimmed(std::uint64_t first, std::uint32_t count) {
  for (std::uint64_t l = first; l < first + count; ++l) {
    lpns_[l].trimmed = true;
    lpns_[l].trim_durable = false;
  }
}

void Oracle::flushed() {
  for (auto& o : lpns_) {
    if (o.trimmed) o.trim_durable = true;
  }
}

void Oracle::in_flight_write(std::uint64_t first, std::uint32_t count, std::uint64_t version) {
  for (std::uint64_t l = first; l < first + count; ++l) lpns_[l].in_flight = version;
}

void Oracle::in_flight_trim(std::uint64_t first, std::uint32_t count) {
  for (std::uint64_t l = first; l < first + count; ++l) {
    if (!lpns_[l].trimmed) {
      lpns_[l].trimmed = true;
      lpns_[l].trim_durable = false;
    }
  }
}

bool Oracle::allows(std::uint64_t lpn, std::uint64_t version_read) const {
  const LpnOracle& o = lpns_[lpn];
  if (o.in_flight && version_read == *o.in_flight) return true;
  if (!o.trimmed) return version_read == o.version;
  if (o.trim_durable) return version_read == 0;
  return version_read == 0 || version_read == o.version;
}

void Oracle::settle(std::uint64_t lpn, std::uint64_t version_read) {
  LpnOracle& o = lpns_[lpn];
  if (version_read == 0 && o.trimmed) {
    o = LpnOracle{o.version, true, true, std::nullopt};  // the trim survived; it is durable now
  } else {
    o = LpnOracle{version_read, false, false, std::nullopt};
  }
}

std::uint64_t Oracle::expected(std::uint64_t lpn) const {
  const LpnOracle& o = lpns_[lpn];
  return o.trimmed ? 0 : o.version;
}

}  // namespace flashdir::testing
