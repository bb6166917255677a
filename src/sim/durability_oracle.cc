#include "durability_oracle.h"

#include <fmt/format.h>
#include <algorithm>
#include <cassert>

#include "flashdir/endian.h"

namespace flashdir::sim::detail {

void stamp_page(ByteSpan page, std::uint64_t lpn, std::uint64_t version) {
  LittleEndianWriter out(page.first(16));
  out.u64(lpn);
  out.u64(version);
}

PageIdentity read_stamp(ConstByteSpan page) {
  LittleEndianReader in(page.first(16));
  PageIdentity identity;
  identity.lpn = in.u64();
  identity.version = in.u64();
  return identity;
}

DurabilityOracle::DurabilityOracle(std::uint64_t logical_pages) : floor_(logical_pages, 0), latest_(logical_pages, 0) {}

void DurabilityOracle::wrote(std::uint64_t first, std::uint32_t count, std::uint64_t version, std::uint64_t sequence) {
  assert((pending_.empty() || pending_.back().version < version) && "versions only grow");
  assert(first + count <= latest_.size());
  std::fill_n(latest_.begin() + static_cast<std::ptrdiff_t>(first), count, version);
  pending_.push_back(Write{first, count, version, sequence});
}

void DurabilityOracle::durable(std::uint64_t durable_sequence) {
  while (!pending_.empty() && pending_.front().sequence <= durable_sequence) {
    const Write& w = pending_.front();
    std::fill_n(floor_.begin() + static_cast<std::ptrdiff_t>(w.first), w.count, w.version);
    pending_.pop_front();
  }
}

void DurabilityOracle::in_flight(std::uint64_t first, std::uint32_t count, std::uint64_t version) {
  in_flight_ = Write{first, count, version, 0};
}

bool DurabilityOracle::pending_wrote(std::uint64_t lpn, std::uint64_t version) const {
  const auto it = std::lower_bound(pending_.begin(), pending_.end(), version,
                                   [](const Write& w, std::uint64_t v) { return w.version < v; });
  return it != pending_.end() && it->version == version && it->covers(lpn);
}

bool DurabilityOracle::allows(std::uint64_t lpn, std::uint64_t version) const {
  if (version == floor_[lpn]) return true;
  if (in_flight_ && in_flight_->version == version && in_flight_->covers(lpn)) return true;
  return pending_wrote(lpn, version);
}

std::string DurabilityOracle::describe(std::uint64_t lpn) const {
  std::string text = fmt::format("durable version {}", floor_[lpn]);
  std::string since;
  for (const Write& w : pending_) {
    if (w.covers(lpn)) since += fmt::format("{}{}", since.empty() ? "" : ", ", w.version);
  }
  text += since.empty() ? "; nothing acknowledged since" : "; acknowledged since: " + since;
  if (in_flight_ && in_flight_->covers(lpn)) text += fmt::format("; in flight: {}", in_flight_->version);
  return text;
}

void DurabilityOracle::settle(std::uint64_t lpn, std::uint64_t version) {
  floor_[lpn] = version;
  latest_[lpn] = version;
}

void DurabilityOracle::settled_all() {
  pending_.clear();
  in_flight_.reset();
}

}  // namespace flashdir::sim::detail
