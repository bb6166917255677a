// Seeded random sequences of insert_clean/set/lookup/peek/remove/take_dirty, and sequential
// writes (lookup and set page by page), against two plain models: a page-by-page map
// lpn -> (ppn, dirty) for what the cache must answer, and a map of run starts -> (length,
// frequency, last use) for its run boundaries and eviction order (LFU with dynamic aging, or
// LRU).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cache_test_util.h"
#include "flashdir/random.h"
#include "support/seed.h"

using namespace flashdir;
using namespace flashdir::ftl;
using namespace flashdir::testing;

namespace {

constexpr std::uint64_t kLpnSpace = 256;
constexpr std::uint64_t kTranslationPageLpns = 32;
constexpr std::uint64_t kMaxEntries = 64;

struct PageModel {
  std::uint32_t ppn = kUnmappedPpn;
  bool dirty = false;
};

struct RunModel {
  std::uint32_t length = 1;
  std::uint64_t frequency = 1;  // the LFU key: the age when the run entered plus its accesses
  std::uint64_t last_use = 0;
};

class Model {
 public:
  explicit Model(const EntryCacheOptions& options) : options_(options) {}

  std::optional<std::uint32_t> page(std::uint64_t lpn) const {
    const auto it = pages_.find(lpn);
    if (it == pages_.end()) return std::nullopt;
    return it->second.ppn;
  }

  // The run start the model expects for cached `lpn`.
  std::map<std::uint64_t, RunModel>::iterator covering(std::uint64_t lpn) {
    auto it = runs_.upper_bound(lpn);
    if (it == runs_.begin()) return runs_.end();
    --it;
    return lpn < it->first + it->second.length ? it : runs_.end();
  }

  void insert_clean(std::uint64_t lpn, std::uint32_t ppn, std::uint32_t length) {
    if (!options_.consecutive) length = 1;
    std::uint32_t n = 0;
    while (n < length && !pages_.contains(lpn + n) && (n == 0 || (lpn + n) % kTranslationPageLpns != 0)) {
      pages_[lpn + n] = PageModel{ppn == kUnmappedPpn ? kUnmappedPpn : ppn + n, false};
      ++n;
    }
    runs_[lpn] = RunModel{n, age_ + 1, ++clock_};
  }

  void set(std::uint64_t lpn, std::uint32_t ppn) {
    const auto it = covering(lpn);
    const bool single = it != runs_.end() && it->second.length == 1;
    if (it != runs_.end() && !single) {
      const std::uint64_t start = it->first;
      const RunModel old = it->second;
      runs_.erase(it);
      if (lpn > start) {
        runs_[start] = RunModel{static_cast<std::uint32_t>(lpn - start), old.frequency, old.last_use};
      }
      if (lpn + 1 < start + old.length) {
        runs_[lpn + 1] =
            RunModel{static_cast<std::uint32_t>(start + old.length - lpn - 1), old.frequency, old.last_use};
      }
    }
    pages_[lpn] = PageModel{ppn, true};
    // A dirty run ending at lpn - 1 in the same translation page, that lpn -> ppn continues,
    // takes the page: its recency refreshed, its frequency unchanged.
    if (options_.consecutive && lpn % kTranslationPageLpns != 0) {
      const auto left = covering(lpn - 1);
      const PageModel before = pages_.contains(lpn - 1) ? pages_.at(lpn - 1) : PageModel{};
      const bool continues =
          ppn == kUnmappedPpn ? before.ppn == kUnmappedPpn : before.ppn != kUnmappedPpn && ppn == before.ppn + 1;
      if (left != runs_.end() && before.dirty && continues) {
        if (single) runs_.erase(lpn);
        ++left->second.length;
        left->second.last_use = ++clock_;
        return;
      }
    }
    if (single) {
      access(lpn);
    } else {
      runs_[lpn] = RunModel{1, age_ + 1, ++clock_};
    }
  }

  void access(std::uint64_t lpn) {
    const auto it = covering(lpn);
    if (it == runs_.end()) return;
    ++it->second.frequency;
    it->second.last_use = ++clock_;
  }

  void remove(std::uint64_t start) {
    const auto it = runs_.find(start);
    REQUIRE(it != runs_.end());
    std::uint64_t least_frequency = it->second.frequency;
    for (const auto& [other, r] : runs_) least_frequency = std::min(least_frequency, r.frequency);
    if (it->second.frequency == least_frequency) age_ = least_frequency;
    for (std::uint64_t i = 0; i < it->second.length; ++i) pages_.erase(start + i);
    runs_.erase(it);
  }

  std::vector<std::uint64_t> take_dirty(std::uint64_t first, std::uint64_t end) {
    std::vector<std::uint64_t> taken;
    for (auto it = pages_.lower_bound(first); it != pages_.end() && it->first < end; ++it) {
      if (!it->second.dirty) continue;
      it->second.dirty = false;
      taken.push_back(it->first);
    }
    return taken;
  }

  // The eviction key of a run: what the victim must minimise.
  std::pair<std::uint64_t, std::uint64_t> key(std::uint64_t start) const {
    const RunModel& r = runs_.at(start);
    const bool lfu = options_.eviction == EntryEviction::lfu;
    return {lfu ? r.frequency : 0, r.last_use};
  }

  // Checks everything the cache shows against the model. Called after every step, so it
  // asserts once per step (a REQUIRE per page would cost millions of assertions).
  void check(const EntryCache& cache) const {
    const std::vector<CachedRun> entries = cache.entries();
    REQUIRE(mismatch(cache, entries) == "");
    check_victim(cache);
  }

  std::uint64_t size() const { return runs_.size(); }

 private:
  // A description of the first difference between the cache and the model; empty if none.
  std::string mismatch(const EntryCache& cache, const std::vector<CachedRun>& entries) const {
    if (entries.size() != runs_.size()) return "entry count differs from the model";
    if (cache.entry_count() != entries.size()) return "entry_count() differs from entries()";
    if (cache.bytes_used() != entries.size() * options_.entry_bytes) return "bytes_used() is off";
    std::uint64_t dirty = 0;
    std::uint64_t previous_end = 0;
    std::uint64_t pages = 0;
    auto model_run = runs_.begin();
    for (const CachedRun& r : entries) {
      const auto where = [&r] {
        return fmt::format(" at entry ({}, {}, {})", r.lpn.value, r.ppn, r.length);
      };
      if (r.length < 1 || (!options_.consecutive && r.length != 1)) return "bad length" + where();
      if (r.lpn.value < previous_end) return "entries unsorted or overlapping" + where();
      if (r.lpn.value / kTranslationPageLpns != (r.lpn.value + r.length - 1) / kTranslationPageLpns) {
        return "a run crosses a translation page" + where();
      }
      previous_end = r.lpn.value + r.length;
      if (model_run->first != r.lpn.value || model_run->second.length != r.length) {
        return "run boundaries differ from the model" + where();
      }
      ++model_run;
      dirty += r.dirty ? 1 : 0;
      for (std::uint32_t i = 0; i < r.length; ++i) {
        const auto page = pages_.find(r.lpn.value + i);
        if (page == pages_.end()) return "a page the model does not cache" + where();
        if (page->second.ppn != (r.ppn == kUnmappedPpn ? kUnmappedPpn : r.ppn + i)) {
          return fmt::format("wrong PPN for LPN {}{}", r.lpn.value + i, where());
        }
        if (page->second.dirty != r.dirty) return "wrong dirty flag" + where();
        ++pages;
      }
    }
    if (pages != pages_.size()) return "the model caches pages the cache lacks";
    if (cache.dirty_count() != dirty) return "dirty_count() is off";
    return "";
  }

  void check_victim(const EntryCache& cache) const {
    const auto victim = cache.victim();
    REQUIRE(victim.has_value() == !runs_.empty());
    if (!victim) return;
    auto best = key(runs_.begin()->first);
    for (const auto& [start, r] : runs_) best = std::min(best, key(start));
    INFO("victim " << *victim);
    REQUIRE(key(victim->lpn.value) == best);
  }

  EntryCacheOptions options_;
  std::map<std::uint64_t, PageModel> pages_;
  std::map<std::uint64_t, RunModel> runs_;
  std::uint64_t clock_ = 0;
  std::uint64_t age_ = 0;  // LFU-DA: the frequency of the last least frequent run removed
};

std::uint32_t random_ppn(SeededRandom& random) {
  if (random.one_in(8)) return kUnmappedPpn;
  return static_cast<std::uint32_t>(random.uniform(1u << 20));
}

void run_model_test(const EntryCacheOptions& options, SeededRandom& random, int steps) {
  EntryCache cache(options);
  Model model(options);
  std::uint32_t next_ppn = 1u << 21;  // above random_ppn's, so only sequential writes continue runs
  for (int step = 0; step < steps; ++step) {
    INFO("step " << step);
    const std::uint64_t lpn = random.uniform(kLpnSpace);
    switch (random.uniform(8)) {
      case 0:
      case 1:
        if (!cache.peek(Lpn(lpn))) {
          const auto length = static_cast<std::uint32_t>(random.between(1, 16));
          const std::uint32_t ppn = random_ppn(random);
          cache.insert_clean(Lpn(lpn), ppn, length);
          model.insert_clean(lpn, ppn, length);
        }
        break;
      case 2: {
        const std::uint32_t ppn = random_ppn(random);
        cache.set(Lpn(lpn), ppn);
        model.set(lpn, ppn);
        break;
      }
      case 3: {
        // A sequential write, to pages programmed in order (or a trim of consecutive LPNs).
        const std::uint64_t count = std::min<std::uint64_t>(random.between(1, 40), kLpnSpace - lpn);
        const bool trim = random.one_in(8);
        for (std::uint64_t i = 0; i < count; ++i) {
          REQUIRE(cache.lookup(Lpn(lpn + i)) == model.page(lpn + i));
          model.access(lpn + i);
          const std::uint32_t ppn = trim ? kUnmappedPpn : next_ppn++;
          cache.set(Lpn(lpn + i), ppn);
          model.set(lpn + i, ppn);
        }
        break;
      }
      case 4:
      case 5:
        REQUIRE(cache.lookup(Lpn(lpn)) == model.page(lpn));
        model.access(lpn);
        break;
      case 6:
        REQUIRE(cache.peek(Lpn(lpn)) == model.page(lpn));
        break;
      case 7: {
        // A translation page's write-back, as the FTL does it before evicting.
        const std::uint64_t first = lpn / kTranslationPageLpns * kTranslationPageLpns;
        const std::uint64_t end = first + kTranslationPageLpns;
        const std::optional<Lpn> next = cache.next_dirty(Lpn(first));
        const std::vector<CachedRun> taken = cache.take_dirty(Lpn(first), Lpn(end));
        const std::vector<std::uint64_t> expected = model.take_dirty(first, end);
        std::vector<std::uint64_t> got;
        for (const CachedRun& r : taken) {
          REQUIRE_FALSE(r.dirty);
          for (std::uint32_t i = 0; i < r.length; ++i) got.push_back(r.lpn.value + i);
        }
        REQUIRE(got == expected);
        if (!expected.empty()) REQUIRE(next == Lpn(expected.front()));
        if (next && next->value < end) REQUIRE_FALSE(expected.empty());
        break;
      }
    }
    // Evict as the FTL would, mostly by victim, sometimes an arbitrary entry.
    while (model.size() > kMaxEntries) {
      Lpn start = cache.victim()->lpn;
      if (random.one_in(4)) {
        const std::vector<CachedRun> all = cache.entries();
        start = all[random.uniform(all.size())].lpn;
      }
      cache.remove(start);
      model.remove(start.value);
    }
    model.check(cache);
  }
}

}  // namespace

TEST_CASE("entry cache matches a plain model under random operations") {
  const std::uint64_t seed = test_seed(0x5eed'cf71);
  INFO(replay_command(seed));
  SeededRandom random(seed);
  for (const bool consecutive : {true, false}) {
    for (const EntryEviction eviction : {EntryEviction::lfu, EntryEviction::lru}) {
      INFO("consecutive " << consecutive << ", "
                          << (eviction == EntryEviction::lfu ? "lfu" : "lru"));
      run_model_test(EntryCacheOptions{kMaxEntries * 12, 12, consecutive, eviction, kTranslationPageLpns}, random,
                     20000);
    }
  }
}
