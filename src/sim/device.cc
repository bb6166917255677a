#include "device.h"

#include <fmt/format.h>
#include <algorithm>

#include "flashdir/sim/stats_delta.h"

namespace flashdir::sim::detail {
namespace {

// Recovery cut this many times in a row runs once uncut, so that every:N with N below what
// a recovery takes still makes progress.
constexpr int kMaxRecoveryCutsInARow = 2;

// Distinct from the aging writes' stream, which starts from the same seed.
constexpr std::uint64_t kCutSeedSalt = 0x706f7765722d6375ULL;  // "power-cu"

std::shared_ptr<PageStore> make_store(const SimConfig& config, const Geometry& geometry) {
  return config.backend == Backend::memory ? make_memory_store(geometry) : make_metadata_store(geometry);
}

}  // namespace

Device::Device(const SimConfig& config, const Geometry& geometry)
    : config_(config),
      geometry_(geometry),
      store_(make_store(config, geometry)),
      chip_(std::make_unique<SimulatedChip>(store_, config.latency_profile(), clock_)),
      switch_(*chip_),
      cut_seeds_(config.seed ^ kCutSeedSalt) {}

Status Device::open(std::uint32_t max_request_pages) {
  auto ftl = Ftl::format(switch_, clock_, config_.ftl_options());
  if (!ftl.is_ok()) return ftl.status().with_context("formatting the FTL");
  ftl_ = std::move(ftl).value();
  if (store_->stores_data()) buffer_.assign(bytes(max_request_pages), 0);
  if (config_.power_cut.enabled()) {
    verdict_.emplace();
    oracle_.emplace(ftl_->logical_pages());
    check_chip_ = std::make_unique<SimulatedChip>(store_, config_.latency_profile(), check_clock_);
  }
  return Status::ok();
}

ConstByteSpan Device::stamped(std::uint64_t lpn, std::uint32_t count, std::uint64_t version) {
  const ByteSpan data(buffer_.data(), bytes(count));
  for (std::uint32_t i = 0; i < count; ++i) {
    stamp_page(data.subspan(bytes(i), geometry_.page_size_bytes), lpn + i, version);
  }
  return data;
}

Status Device::write(std::uint64_t lpn, std::uint32_t count) {
  if (!oracle_) {
    const ConstByteSpan data = buffer_.empty() ? ConstByteSpan() : ConstByteSpan(buffer_.data(), bytes(count));
    auto sequence = ftl_->write(Lpn(lpn), count, data);
    return sequence.is_ok() ? Status::ok() : sequence.status();
  }
  const std::uint64_t version = next_version_++;
  auto sequence = ftl_->write(Lpn(lpn), count, stamped(lpn, count, version));
  if (sequence.is_ok()) {
    oracle_->wrote(lpn, count, version, *sequence);
    oracle_->durable(ftl_->durable_seq());
    return Status::ok();
  }
  if (!recovered_from(sequence.status())) return sequence.status();
  oracle_->in_flight(lpn, count, version);
  recover();
  return Status::ok();
}

Status Device::read(std::uint64_t lpn, std::uint32_t count) {
  const ByteSpan data = buffer_.empty() ? ByteSpan() : ByteSpan(buffer_.data(), bytes(count));
  const Status status = ftl_->read(Lpn(lpn), count, data);
  if (!status.is_ok()) {
    if (!recovered_from(status)) return status;
    recover();
    return Status::ok();
  }
  if (!oracle_) return Status::ok();
  for (std::uint32_t i = 0; i < count; ++i) {
    const PageIdentity got = read_stamp(data.subspan(bytes(i), geometry_.page_size_bytes));
    const std::uint64_t expected = oracle_->expected(lpn + i);
    if (got.version != expected || (got.version != 0 && got.lpn != lpn + i)) {
      violation(fmt::format("a replayed read of LPN {} returned version {} of LPN {}, not the newest write, "
                            "version {}",
                            lpn + i, got.version, got.lpn, expected));
    }
  }
  verdict_->checked_read_pages += count;
  return Status::ok();
}

Status Device::flush() {
  const Status status = ftl_->flush();
  if (status.is_ok()) {
    if (oracle_) oracle_->durable(ftl_->durable_seq());
    return status;
  }
  if (!recovered_from(status)) return status;
  recover();
  return Status::ok();
}

void Device::start_replay() {
  measured_ = FtlStats{};
  if (oracle_) {
    // Cuts from here on: the fault injector slides in under the open FTL.
    power_cycle_injector();
  }
  session_start_ = ftl_->stats();
}

FtlStats Device::measured_stats() const {
  FtlStats total = measured_;
  stats_add(total, stats_delta(session_start_, ftl_->stats()));
  return total;
}

bool Device::recovered_from(const Status& status) {
  return oracle_ && faulty_ && faulty_->power_lost() && status.code() == StatusCode::power_lost;
}

void Device::power_cycle_injector() {
  FaultPlan plan;
  plan.seed = cut_seeds_.next_u64();
  if (config_.power_cut.mode == PowerCutPlan::Mode::every) {
    plan.cut_at_operation = config_.power_cut.operations;
  } else {
    plan.cut_one_in = config_.power_cut.operations;
  }
  faulty_ = std::make_unique<FaultyChip>(*chip_, plan);
  switch_.route(*faulty_);
}

void Device::power_cycle() {
  faulty_.reset();  // it borrows the chip
  chip_ = std::make_unique<SimulatedChip>(store_, config_.latency_profile(), clock_);
  check_chip_ = std::make_unique<SimulatedChip>(store_, config_.latency_profile(), check_clock_);
  power_cycle_injector();
}

void Device::recover() {
  ++verdict_->cuts;
  stats_add(measured_, stats_delta(session_start_, ftl_->stats()));
  ftl_.reset();
  for (int cut_in_a_row = 0;; ++cut_in_a_row) {
    power_cycle();
    if (cut_in_a_row >= kMaxRecoveryCutsInARow) switch_.route(*chip_);
    auto opened = Ftl::open(switch_, clock_, config_.ftl_options());
    if (opened.is_ok()) {
      ftl_ = std::move(opened).value();
      break;
    }
    if (!faulty_->power_lost() || opened.status().code() != StatusCode::power_lost) {
      violation(fmt::format("recovery failed ({}): {}", faulty_->cut().describe(), opened.status().to_string()));
      verdict_->stopped = true;
      return;
    }
    ++verdict_->cuts;
    ++verdict_->recovery_cuts;
  }
  check_recovered_state();
  switch_.route(*faulty_);
  session_start_ = ftl_->stats();
}

void Device::check_recovered_state() {
  const RecoveryReport& report = ftl_->recovery();
  if (report.dangling_mappings != 0 || report.shared_pages != 0) {
    violation(fmt::format("recovery mapped {} LPNs into erased pages and {} pages to two LPNs",
                          report.dangling_mappings, report.shared_pages));
  }
  switch_.route(*check_chip_);
  const std::uint64_t logical = oracle_->logical_pages();
  const auto run_pages = static_cast<std::uint32_t>(buffer_.size() / geometry_.page_size_bytes);
  const ByteSpan buffer(buffer_);
  for (std::uint64_t first = 0; first < logical; first += run_pages) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(run_pages, logical - first));
    const ByteSpan data = buffer.first(bytes(count));
    if (Status s = ftl_->read(Lpn(first), count, data); !s.is_ok()) {
      violation(fmt::format("reading LPNs [{}, {}) back failed: {}", first, first + count, s.to_string()));
      continue;  // their oracle state stays: the next check looks again
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint64_t lpn = first + i;
      const PageIdentity got = read_stamp(data.subspan(bytes(i), geometry_.page_size_bytes));
      if (got.version != 0 && got.lpn != lpn) {
        violation(fmt::format("LPN {} holds the data of LPN {} (version {})", lpn, got.lpn, got.version));
      } else if (!oracle_->allows(lpn, got.version)) {
        violation(fmt::format("LPN {} reads version {}, which the contract does not allow ({})", lpn,
                              got.version, oracle_->describe(lpn)));
      }
      oracle_->settle(lpn, got.version);
    }
  }
  oracle_->settled_all();
  verdict_->checked_lpns += logical;
}

void Device::violation(std::string what) {
  ++verdict_->violation_count;
  if (verdict_->violations.size() < PowerCutVerdict::kMaxViolationsKept) {
    verdict_->violations.push_back(PowerCutVerdict::Violation{verdict_->cuts, std::move(what)});
  }
}

}  // namespace flashdir::sim::detail
