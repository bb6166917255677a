#include "scenario_steps.h"

#include <algorithm>
#include <numeric>

namespace flashdir::testing {

SweepOptions aimed_sweep_options(format::MappingScheme mapping, std::uint64_t variant) {
  SweepOptions options;
  options.ftl = small_cache_options(mapping, format::GcPolicy::dual_greedy);
  options.ftl.checkpoint_interval_pages = 400;
  options.variant = variant;
  return options;
}

void age(ScenarioRun& run, std::uint64_t victims) {
  const std::uint64_t L = run.host.ftl().logical_pages();
  for (std::uint64_t lpn = 0; lpn < L; lpn += 16) {
    run.host.write(lpn, static_cast<std::uint32_t>(std::min<std::uint64_t>(16, L - lpn)));
  }
  while (!run.host.power_lost() && run.host.ftl().stats().gc_runs < victims) random_writes(run, 1);
}

void random_writes(ScenarioRun& run, std::uint64_t pages) {
  const std::uint64_t L = run.host.ftl().logical_pages();
  for (std::uint64_t written = 0; written < pages && !run.host.power_lost();) {
    const auto count = static_cast<std::uint32_t>(run.random.between(1, 8));
    run.host.write(run.random.uniform(L - count + 1), count);
    written += count;
  }
}

void flush_with_checkpoint(ScenarioRun& run) {
  for (int attempt = 0; attempt < 100 && !run.host.power_lost(); ++attempt) {
    const std::uint64_t before = run.ops.count();
    run.host.flush();
    if (count_kind(ops_since(run, before), OpKind::checkpoint) > 0) return;
    random_writes(run, 100);
  }
}

void repeat_until(ScenarioRun& run, const std::string& name, const std::function<void()>& request,
                  const std::function<bool(std::span<const ChipOp>)>& landed) {
  for (int attempt = 0; attempt < 2000 && !run.host.power_lost(); ++attempt) {
    const std::uint64_t before = run.ops.count();
    request();
    if (landed(ops_since(run, before))) {
      run.marks[name] = before;
      run.mark(name + " done");
      return;
    }
  }
}

std::span<const ChipOp> ops_since(const ScenarioRun& run, std::uint64_t first) {
  return std::span<const ChipOp>(run.ops.ops()).subspan(first);
}

std::span<const ChipOp> ops_between(const Recording& recording, std::uint64_t first, std::uint64_t end) {
  return std::span<const ChipOp>(recording.ops).subspan(first, end - first);
}

std::uint64_t count_kind(std::span<const ChipOp> ops, OpKind kind) {
  return static_cast<std::uint64_t>(
      std::count_if(ops.begin(), ops.end(), [&](const ChipOp& op) { return op.kind == kind; }));
}

std::vector<std::uint64_t> every_op(std::uint64_t first, std::uint64_t end) {
  std::vector<std::uint64_t> ops(end - first);
  std::iota(ops.begin(), ops.end(), first);
  return ops;
}

}  // namespace flashdir::testing
