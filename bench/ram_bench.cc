// The device RAM policies' own cost per request as the RAM grows: TreeFTL promises amortised
// O(1) victim selection (LRU at caching-group granularity, no scan over cached pages), so its
// time per request must stay flat from 1 MiB to 256 MiB. Flash operations are stubbed out: this
// measures the RAM bookkeeping alone.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "ftl/mapcache/entry_cache.h"
#include "ftl/layout.h"
#include "ftl/ram/ram_manager.h"
#include "flashdir/random.h"

using namespace flashdir;

namespace {

// Translation pages that cost nothing: all unmapped, writes dropped.
class NullTranslationPages final : public ftl::TranslationPages {
 public:
  Status read(std::uint64_t, std::span<std::uint32_t> out) override {
    std::fill(out.begin(), out.end(), ftl::kUnmappedPpn);
    return Status::ok();
  }
  Status write(std::uint64_t, std::span<const std::uint32_t>) override { return Status::ok(); }
};

void BM_RamRequest(benchmark::State& state) {
  const auto policy = static_cast<format::RamPolicy>(state.range(0));
  const std::uint64_t budget = static_cast<std::uint64_t>(state.range(1)) << 20;
  // A 64 GiB chip of 4 KiB pages: the working set below is four times the RAM.
  const auto layout = ftl::FtlLayout::compute(Geometry{4096, 64, 128, 131072}, 70).value();
  FtlOptions options;
  options.mapping = format::MappingScheme::dftl;
  options.ram.policy = policy;
  options.ram.budget_bytes = budget;
  FtlStats stats;
  NullTranslationPages pages;
  auto ram = ram::make_ram_manager(layout, options, LatencyProfile::of(LatencyPreset::zero), pages, stats).value();
  SeededRandom random(1);
  const std::uint64_t working_set = 4 * budget / 4096;
  std::uint64_t version = 0;
  std::vector<ram::BufferedPage> victims;
  for (auto _ : state) {
    const Lpn lpn(random.uniform(working_set));
    if (random.uniform(2) == 0) {
      benchmark::DoNotOptimize(ram->find(lpn));
      benchmark::DoNotOptimize(ram->lookup(lpn, ftl::Access::read).value());
    } else {
      ram::BufferedPage page;
      page.lpn = lpn;
      page.version = page.pending_since = ++version;
      (void)ram->put(std::move(page));
    }
    for (;;) {
      if (!ram->evict(victims).is_ok()) std::abort();
      if (victims.empty()) break;
      for (auto& v : victims) {
        (void)ram->lookup(v.lpn, ftl::Access::flush);
        ram->set(v.lpn, 7);
      }
    }
    ram->end_request();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetLabel(format::ram_policy_name(policy));
}

// policy (1 tree, 2 aps, 3 static, 4 stack), RAM in MiB
BENCHMARK(BM_RamRequest)->ArgsProduct({{1, 2, 3, 4}, {1, 16, 256}});

}  // namespace

BENCHMARK_MAIN();
