// Hit ratios of the entry cache driven as the FTL drives it: a miss loads the run around the
// LPN from its translation page, a write looks the LPN up and records the new mapping, and
// eviction writes the victim's translation page back first. The questions are the policy's:
// does LFU keep up with LRU on a stationary Zipf stream, and does a sequentially written space
// stay covered by few runs?
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "cache_test_util.h"
#include "flashdir/random.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::ftl;
using namespace flashdir::testing;

namespace {

constexpr std::uint64_t kTranslationPageEntries = 64;
constexpr std::uint64_t kLogicalPages = 64 * kTranslationPageEntries;

// The entry cache over a flash-resident page map, with the FTL's miss and eviction paths.
class CacheRig {
 public:
  explicit CacheRig(const EntryCacheOptions& options) : cache_(options), flash_(kLogicalPages, kUnmappedPpn) {}

  void read(std::uint64_t lpn) {
    access(lpn);
    evict();
  }
  // A write to a fresh physical page, allocated in order as a write frontier does.
  void write(std::uint64_t lpn) {
    access(lpn);
    cache_.set(Lpn(lpn), next_ppn_++);
    evict();
  }
  void write_back_all() {
    for (std::uint64_t tp = 0; tp < kLogicalPages / kTranslationPageEntries; ++tp) write_back(tp);
  }
  void reset_counts() { hits_ = misses_ = 0; }

  double hit_ratio() const { return hits_ + misses_ == 0 ? 0.0 : double(hits_) / double(hits_ + misses_); }
  std::uint64_t misses() const { return misses_; }
  const EntryCache& cache() const { return cache_; }

 private:
  void access(std::uint64_t lpn) {
    if (cache_.lookup(Lpn(lpn))) {
      ++hits_;
      return;
    }
    ++misses_;
    const std::uint64_t tp_end = (lpn / kTranslationPageEntries + 1) * kTranslationPageEntries;
    const std::uint32_t ppn = flash_[lpn];
    std::uint32_t length = 1;
    while (lpn + length < tp_end && flash_[lpn + length] == (ppn == kUnmappedPpn ? kUnmappedPpn : ppn + length)) {
      ++length;
    }
    cache_.insert_clean(Lpn(lpn), ppn, length);
  }

  void evict() {
    while (cache_.over_budget()) {
      const CachedRun victim = *cache_.victim();
      if (victim.dirty) write_back(victim.lpn.value / kTranslationPageEntries);
      cache_.remove(victim.lpn);
    }
  }

  void write_back(std::uint64_t tp) {
    const Lpn first(tp * kTranslationPageEntries);
    for (const CachedRun& run : cache_.take_dirty(first, Lpn(first.value + kTranslationPageEntries))) {
      for (std::uint32_t i = 0; i < run.length; ++i) {
        flash_[run.lpn.value + i] = run.ppn == kUnmappedPpn ? kUnmappedPpn : run.ppn + i;
      }
    }
  }

  EntryCache cache_;
  std::vector<std::uint32_t> flash_;
  std::uint32_t next_ppn_ = 0;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

// Zipf-distributed LPNs: rank k drawn with probability proportional to 1/k^theta, ranks
// scattered over the logical space by a seeded permutation.
class ZipfLpns {
 public:
  ZipfLpns(double theta, SeededRandom& random) : lpn_of_rank_(kLogicalPages), cdf_(kLogicalPages) {
    std::iota(lpn_of_rank_.begin(), lpn_of_rank_.end(), 0);
    for (std::uint64_t i = kLogicalPages - 1; i > 0; --i)
      std::swap(lpn_of_rank_[i], lpn_of_rank_[random.uniform(i + 1)]);
    double sum = 0;
    for (std::uint64_t k = 0; k < kLogicalPages; ++k) cdf_[k] = sum += 1.0 / std::pow(double(k + 1), theta);
    for (double& c : cdf_) c /= sum;
  }

  std::uint64_t next(SeededRandom& random) const {
    const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), random.unit());
    return lpn_of_rank_[std::min<std::size_t>(it - cdf_.begin(), kLogicalPages - 1)];
  }

 private:
  std::vector<std::uint64_t> lpn_of_rank_;
  std::vector<double> cdf_;
};

void fill_sequentially(CacheRig& rig) {
  for (std::uint64_t lpn = 0; lpn < kLogicalPages; ++lpn) rig.write(lpn);
  rig.write_back_all();
}

struct Workload {
  bool filled = true;     // the whole space written in LPN order first, as the simulator's prefill
  int reads_in_ten = 10;  // of every ten requests
};

// The hit ratio of a Zipf(0.99) stream after the workload's fill.
double zipf_hit_ratio(const EntryCacheOptions& options, const Workload& workload, std::uint64_t seed) {
  SeededRandom random(seed);
  const ZipfLpns lpns(0.99, random);
  CacheRig rig(options);
  if (workload.filled) fill_sequentially(rig);
  rig.reset_counts();
  for (int i = 0; i < 40000; ++i) {
    const std::uint64_t lpn = lpns.next(random);
    if (random.uniform(10) < std::uint64_t(workload.reads_in_ten)) {
      rig.read(lpn);
    } else {
      rig.write(lpn);
    }
  }
  return rig.hit_ratio();
}

// CFTL's CPMT over the rig's translation pages.
EntryCacheOptions runs_options(std::uint64_t capacity_bytes) {
  return EntryCacheOptions{capacity_bytes, 12, true, EntryEviction::lfu, kTranslationPageEntries};
}

EntryCacheOptions with_eviction(EntryCacheOptions options, EntryEviction eviction) {
  options.eviction = eviction;
  return options;
}

void check_lfu_keeps_up(const EntryCacheOptions& options) {
  const std::uint64_t seed = test_seed(0x21bf'0099);
  INFO(replay_command(seed));
  for (const Workload workload : {Workload{false, 10}, Workload{true, 10}, Workload{true, 3}}) {
    INFO("filled " << workload.filled << ", reads " << workload.reads_in_ten << " in 10");
    const double lru = zipf_hit_ratio(with_eviction(options, EntryEviction::lru), workload, seed);
    const double lfu = zipf_hit_ratio(with_eviction(options, EntryEviction::lfu), workload, seed);
    INFO("hit ratio LRU " << lru << ", LFU " << lfu);
    CHECK(lfu >= lru - 0.02);
  }
}

}  // namespace

TEST_CASE("LFU keeps up with LRU on a Zipf stream over single pages") {
  // A tenth of the logical space fits.
  check_lfu_keeps_up(EntryCacheOptions{kLogicalPages / 10 * 8, 8, false, EntryEviction::lfu});
}

TEST_CASE("LFU keeps up with LRU on a Zipf stream over consecutive runs") {
  // Fewer entries than translation pages: even whole runs do not all fit.
  check_lfu_keeps_up(runs_options(kLogicalPages / kTranslationPageEntries / 2 * 12));
}

TEST_CASE("a sequentially written space stays covered by few runs") {
  const std::uint64_t seed = test_seed(0x5e9'f111);
  INFO(replay_command(seed));
  SeededRandom random(seed);
  const ZipfLpns lpns(0.99, random);
  constexpr std::uint64_t kTranslationPages = kLogicalPages / kTranslationPageEntries;
  // Room for a tenth of the pages as single entries, many times the runs that cover them all.
  CacheRig rig(runs_options(kLogicalPages / 10 * 12));
  fill_sequentially(rig);
  CHECK(rig.cache().entry_count() <= kTranslationPages);
  rig.reset_counts();
  for (int i = 0; i < 40000; ++i) rig.read(lpns.next(random));
  INFO("hit ratio " << rig.hit_ratio() << ", " << rig.cache().entry_count() << " entries");
  CHECK(rig.misses() <= kTranslationPages);
  CHECK(rig.cache().entry_count() <= 2 * kTranslationPages);
}
