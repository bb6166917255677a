#include "flashdir/sim/runner.h"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "device.h"
#include "flashdir/clock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/progress.h"
#include "flashdir/random.h"
#include "flashdir/sim/chip_sizing.h"
#include "flashdir/size.h"

namespace flashdir::sim {
namespace {

using detail::Device;
using WallClock = std::chrono::steady_clock;

// A progress bar (on a terminal) for the steps with more requests than this, updated every
// kProgressStride requests so that the loop stays tight.
constexpr std::uint64_t kProgressMinRequests = 200'000;
constexpr std::uint64_t kProgressStride = 4096;

double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

double per_request_us(std::uint64_t total_ns, std::uint64_t requests) {
  return requests == 0 ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(requests) / 1e3;
}

double rate(std::uint64_t requests, double seconds) {
  return seconds <= 0 ? 0.0 : static_cast<double>(requests) / seconds;
}

// An arrival time after scaling, saturating far beyond any simulated run.
std::uint64_t scaled_ns(std::uint64_t ns, double scale) {
  if (scale == 1.0) return ns;
  const double scaled = std::round(static_cast<double>(ns) * scale);
  return scaled >= 0x1p62 ? std::uint64_t{1} << 62 : static_cast<std::uint64_t>(scaled);
}

// The whole logical space, in order, a block's worth of pages per request.
Status prefill(Device& device, RunResult& result) {
  const std::uint64_t logical = device.ftl().logical_pages();
  const std::uint32_t run = device.chip().geometry().pages_per_block;
  ProgressBar progress("prefill", logical / run, kProgressMinRequests);
  for (std::uint64_t lpn = 0; lpn < logical; lpn += run) {
    if (result.prefill_requests % kProgressStride == 0) progress.update(result.prefill_requests);
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(run, logical - lpn));
    if (Status s = device.write(lpn, count); !s.is_ok()) {
      return s.with_context(fmt::format("prefill, writing LPNs [{}, {})", lpn, lpn + count));
    }
    ++result.prefill_requests;
  }
  return Status::ok();
}

inline constexpr std::uint32_t kMaxAgingRun = 16;

// factor x logical pages in runs of 1-16 pages at seeded uniform random places.
Status age(Device& device, double factor, std::uint64_t seed, RunResult& result) {
  const std::uint64_t logical = device.ftl().logical_pages();
  const auto target = static_cast<std::uint64_t>(std::llround(factor * static_cast<double>(logical)));
  SeededRandom random(seed);
  // Runs average 8.5 pages.
  ProgressBar progress("aging", target, kProgressMinRequests * 8);
  while (result.aging_pages < target) {
    if (result.aging_requests % kProgressStride == 0) progress.update(result.aging_pages);
    const std::uint64_t longest =
        std::min<std::uint64_t>({kMaxAgingRun, logical, target - result.aging_pages});
    const auto count = static_cast<std::uint32_t>(random.between(1, longest));
    const std::uint64_t lpn = random.uniform(logical - count + 1);
    if (Status s = device.write(lpn, count); !s.is_ok()) {
      return s.with_context(fmt::format("aging, writing LPNs [{}, {})", lpn, lpn + count));
    }
    ++result.aging_requests;
    result.aging_pages += count;
  }
  return Status::ok();
}

// The measured passes over the trace. The per-request path only reads the precomputed
// requests and calls the FTL: no allocation, no look-up.
Status replay(Device& device, const SimConfig& config, const CompactTrace& trace, RunResult& result) {
  SimClock& clock = device.clock();
  const bool closed_loop = result.closed_loop;
  const double scale = config.time_scale;
  const std::uint64_t flush_every = config.flush_every_requests;
  std::uint64_t since_flush = 0;
  std::uint64_t completed = 0;
  const std::uint64_t sample_every = std::max<std::uint64_t>(1, trace.requests.size() * config.repeat / 256);
  ProgressBar progress("replay", trace.requests.size() * config.repeat, kProgressMinRequests);
  const ReplayRequest* const begin = trace.requests.data();
  const ReplayRequest* const end = begin + trace.requests.size();
  for (std::uint32_t pass = 0; pass < config.repeat; ++pass) {
    const std::uint64_t pass_start_ns = clock.now_ns();
    std::uint64_t arrival_ns = 0;  // of the trace request being served
    std::uint64_t started_ns = 0;
    bool first_piece = true;
    for (const ReplayRequest* r = begin; r != end && !device.stopped(); ++r) {
      if (first_piece) {
        if (!closed_loop) {
          arrival_ns = pass_start_ns + scaled_ns(r->arrival_ns, scale);
          clock.advance_to_ns(arrival_ns);
        } else {
          arrival_ns = clock.now_ns();
        }
        started_ns = clock.now_ns();
      }
      Status s =
          r->is_read() ? device.read(r->first_lpn, r->page_count) : device.write(r->first_lpn, r->page_count);
      if (!s.is_ok()) {
        return s.with_context(fmt::format("replay pass {}, request {} ({} of LPNs [{}, {}))", pass + 1,
                                          r - begin + 1, r->is_read() ? "read" : "write", r->first_lpn,
                                          r->first_lpn + r->page_count));
      }
      first_piece = !r->continues;
      if (!first_piece) continue;
      const std::uint64_t completed_ns = clock.now_ns();
      result.service_ns += completed_ns - started_ns;
      const std::uint64_t response_ns = completed_ns - arrival_ns;
      result.response_ns += response_ns;
      result.response_ns_max = std::max(result.response_ns_max, response_ns);
      ++(r->is_read() ? result.reads : result.writes);
      if (++completed % kProgressStride == 0) progress.update(completed);
      if (completed % sample_every == 0) {
        const Ftl::RamSplit split = device.ftl().ram_split();
        result.mapping_partition.emplace_back(completed, split.budget_bytes == 0
                                                             ? 0.0
                                                             : static_cast<double>(split.mapping_partition_bytes) /
                                                                   static_cast<double>(split.budget_bytes));
      }
      if (flush_every != 0 && ++since_flush == flush_every) {
        since_flush = 0;
        if (Status f = device.flush(); !f.is_ok()) return f.with_context("flush");
        ++result.flushes;
      }
    }
  }
  result.requests = result.reads + result.writes;
  return Status::ok();
}

}  // namespace

double RunResult::mean_service_us() const {
  return per_request_us(service_ns, requests);
}
double RunResult::mean_response_us() const {
  return per_request_us(response_ns, requests);
}
double RunResult::replay_requests_per_second() const {
  return rate(requests, replay_wall_seconds);
}
double RunResult::total_requests_per_second() const {
  return rate(total_requests, total_wall_seconds);
}

Result<RunResult> run_configuration(const SimConfig& config, const Geometry& geometry,
                                    const CompactTrace& trace) {
  const auto run_started = WallClock::now();
  FLASHDIR_TRY(config.validate());
  FLASHDIR_TRY(geometry.validate());
  if (geometry.page_size_bytes != trace.page_size_bytes || trace.pages_per_chunk != config.chunk_pages(geometry)) {
    return Status::invalid_argument(fmt::format(
        "the trace was compacted for {}-byte pages in chunks of {}, the chip has {}-byte pages in blocks of "
        "{} (chunk-pages={})",
        trace.page_size_bytes, trace.pages_per_chunk, geometry.page_size_bytes, geometry.pages_per_block,
        config.get("chunk-pages").value()));
  }
  RunResult result;
  result.geometry = geometry;
  result.closed_loop = config.closed_loop || !trace.timed;

  auto device = std::make_unique<Device>(config, geometry);
  const std::uint32_t max_pages = std::max({trace.max_request_pages, geometry.pages_per_block, kMaxAgingRun});
  FLASHDIR_TRY(device->open(max_pages));
  result.logical_pages = device->ftl().logical_pages();
  FLASHDIR_TRY(check_span_fits(geometry, result.logical_pages, trace));

  if (config.prefill) FLASHDIR_TRY(prefill(*device, result));
  FLASHDIR_TRY(age(*device, config.age_factor, config.seed, result));
  // The replay starts on an idle device: the write buffer drained, as after any pause.
  if (Status s = device->flush(); !s.is_ok()) return s.with_context("flushing before the replay");

  device->start_replay();
  const std::vector<std::uint32_t> erases_before = erase_counts(device->chip());
  const std::uint64_t replay_started_ns = device->clock().now_ns();
  const auto replay_started = WallClock::now();
  FLASHDIR_TRY(replay(*device, config, trace, result));
  result.replay_wall_seconds = seconds_since(replay_started);
  result.simulated_ns = device->clock().now_ns() - replay_started_ns;
  result.stats = device->measured_stats();
  if (const PowerCutVerdict* verdict = device->verdict(); verdict != nullptr) result.power_cuts = *verdict;
  result.replay_erases = erase_spread(device->chip(), erases_before);
  result.end_erases = erase_spread(device->chip());
  result.total_requests = result.prefill_requests + result.aging_requests + result.stats.read_requests +
                          result.stats.write_requests;
  device.reset();
  result.total_wall_seconds = seconds_since(run_started);
  return result;
}

}  // namespace flashdir::sim
