// flashdir-powercut-demo: random I/O through the FTL of a formatted cache, a power cut at a
// random chip operation, recovery, and a check of what survived against the durability
// contract (doc/ftl.md): every write at or below the durable watermark at the cut must be there;
// newer writes, still in the volatile device RAM or in flight, may or may not be.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "flashdir/cache_dir.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/faulty_chip.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "flashdir/size.h"

using namespace flashdir;

namespace {

// Per LPN, the writes acknowledged since its last durable one: what it may read back as.
class Ledger {
 public:
  explicit Ledger(std::uint64_t logical_pages) : pages_(logical_pages) {}

  void wrote(std::uint64_t lpn, std::uint64_t version, std::uint64_t hash, std::uint64_t durable) {
    auto& h = pages_[lpn];
    h.push_back({version, hash});
    // Everything before the newest durable write is superseded by it.
    auto newest_durable = std::find_if(h.rbegin(), h.rend(), [&](const Entry& e) { return e.version <= durable; });
    if (newest_durable != h.rend()) h.erase(h.begin(), std::prev(newest_durable.base()));
  }
  void in_flight(std::uint64_t lpn, std::uint64_t hash) { in_flight_.push_back({lpn, hash}); }

  struct Verdict {
    std::uint64_t durable_intact = 0, durable_lost = 0;  // pages whose newest write was durable
    std::uint64_t newer_came_back = 0, fell_back = 0;    // pages with a newer write still volatile
    std::uint64_t newer_lost = 0;                        // ... that read as neither (a violation)
  };
  // `hash_of(lpn)` reads the page back after recovery.
  template <typename ReadHash>
  Verdict check(std::uint64_t durable, ReadHash hash_of) const {
    Verdict v;
    for (std::uint64_t lpn = 0; lpn < pages_.size(); ++lpn) {
      const auto& h = pages_[lpn];
      if (h.empty()) continue;
      const std::uint64_t got = hash_of(lpn);
      const bool landed_in_flight = std::any_of(in_flight_.begin(), in_flight_.end(),
                                                [&](const auto& f) { return f.first == lpn && f.second == got; });
      auto newest_durable = std::find_if(h.rbegin(), h.rend(), [&](const Entry& e) { return e.version <= durable; });
      auto after = newest_durable == h.rend() ? h.begin() : newest_durable.base();
      const bool newer = landed_in_flight || std::any_of(after, h.end(), [&](const Entry& e) { return e.hash == got; });
      if (after == h.end()) {  // the newest write was durable: it must be there
        (got == h.back().hash || landed_in_flight ? v.durable_intact : v.durable_lost) += 1;
      } else if (newer) {
        ++v.newer_came_back;
      } else if (newest_durable == h.rend() || got == newest_durable->hash) {
        ++v.fell_back;  // the volatile writes were lost; the durable one (or whatever preceded) is there
      } else {
        ++v.newer_lost;
      }
    }
    return v;
  }

 private:
  struct Entry {
    std::uint64_t version;
    std::uint64_t hash;
  };
  std::vector<std::vector<Entry>> pages_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> in_flight_;
};

int fail(const Status& status) {
  fmt::print(stderr, "flashdir-powercut-demo: {}\n", status.to_string());
  return 1;
}

// Prints how an open went. Returns false if recovery found what a power cut cannot explain:
// mappings into vanished pages, pages claimed twice, lost data.
bool report_recovery(const Ftl& ftl, std::string_view when) {
  const RecoveryReport& recovery = ftl.recovery();
  if (recovery.clean) {
    // A clean open replays nothing (its report counts no loss), but the checkpoint still lists
    // the LPNs lost earlier (that fsck -y gave up, say): they count as much.
    const std::size_t lost = ftl.lost_lpns().size();
    if (lost == 0) return true;
    fmt::print("{}: clean open from checkpoint {}, {} lost LPNs recorded earlier\n", when,
               recovery.checkpoint_generation, lost);
    return false;
  }
  fmt::print("{}: recovery from checkpoint {}: {} blocks scanned, {} data and {} translation pages replayed, "
             "{} damaged pages skipped, {} dangling mappings, {} shared pages, {} lost LPNs\n",
             when, recovery.checkpoint_generation, recovery.scanned_blocks, recovery.replayed_data_pages,
             recovery.replayed_translation_pages, recovery.damaged_pages, recovery.dangling_mappings,
             recovery.shared_pages, recovery.lost_lpns);
  for (const auto& step : recovery.steps) fmt::print("  {} (simulated)\n", step);
  return recovery.dangling_mappings == 0 && recovery.shared_pages == 0 && recovery.lost_lpns == 0;
}

// The logical pages that fail verification when read: damage the open does not see (the
// roll-forward judges pages by their records, and pages checkpointed earlier are not read).
Result<std::uint64_t> damaged_pages(Ftl& ftl, const Geometry& g) {
  std::vector<std::uint8_t> page(g.page_size_bytes);
  std::uint64_t damaged = 0;
  for (std::uint64_t lpn = 0; lpn < ftl.logical_pages(); ++lpn) {
    const Status s = ftl.read(Lpn(lpn), 1, page);
    if (s.code() == StatusCode::corruption) {
      ++damaged;
    } else if (!s.is_ok()) {
      return s;
    }
  }
  return damaged;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs random writes, reads and flushes through the FTL of a cache made by mkfs.flashdir, "
               "cuts the power at a random chip operation, recovers, and checks what survived against the "
               "durability contract."};
  std::string dir;
  std::uint64_t seed = 1;
  std::uint64_t requests = 20000;
  app.add_option("DIR", dir, "Cache directory made by mkfs.flashdir")->required();
  app.add_option("--seed", seed, "Seed of the workload and of the cut point")->capture_default_str();
  app.add_option("--requests", requests, "Requests the workload would issue without a cut")
      ->capture_default_str()
      ->check(CLI::Range(10, 10'000'000));
  CLI11_PARSE(app, argc, argv);

  const CacheDirPaths paths(dir);
  auto sb = read_superblock_file(paths.superblock);
  if (!sb.is_ok()) return fail(sb.status());
  format::Superblock superblock = sb->superblock;
  // The superblock says whether the cache was shut down cleanly: in use from before the first
  // change until the FTL is closed, as a power cut leaves it.
  auto mark_clean_shutdown = [&](bool clean) {
    superblock.clean_shutdown = clean;
    return update_superblock_file(paths.superblock, superblock);
  };
  // Before anything changes (the clean flag included): the image must be this cache's, and
  // writable.
  {
    auto header = read_image_header(paths.image);
    if (!header.is_ok()) return fail(header.status());
    if (Status s = check_image_matches(paths.image, header.value(), superblock); !s.is_ok()) return fail(s);
    auto store = open_image_store(paths.image, ImageAccess::read_write);
    if (!store.is_ok()) return fail(store.status());
  }
  const Geometry g = superblock.geometry;
  const FtlOptions options = ftl_options(superblock);
  SeededRandom random(seed);
  std::uint64_t durable = 0;  // the watermark last seen before the cut
  std::optional<Ledger> ledger;
  // Fill the logical space first, so that garbage collection runs when the power goes.
  {
    if (Status s = mark_clean_shutdown(false); !s.is_ok()) return fail(s);
    auto store = open_image_store(paths.image, ImageAccess::read_write);
    if (!store.is_ok()) return fail(store.status());
    SimClock clock;
    SimulatedChip chip(store.value(), superblock.latency, clock);
    auto ftl = Ftl::open(chip, clock, options);
    if (!ftl.is_ok()) return fail(ftl.status());
    // The cache may carry damage from before the run (an earlier cut): say so before adding to it.
    auto damaged = damaged_pages(**ftl, g);
    if (!damaged.is_ok()) return fail(damaged.status());
    if (*damaged != 0) fmt::print("before the run: {} logical pages fail verification when read\n", *damaged);
    if (!report_recovery(**ftl, "before the run") || *damaged != 0) {
      fmt::print("the cache was damaged before this run; run fsck.flashdir on it (it lists lost LPNs; make a new "
                 "cache with mkfs.flashdir to start afresh)\n");
      return 2;
    }
    const std::uint64_t L = (*ftl)->logical_pages();
    ledger.emplace(L);
    std::vector<std::uint8_t> data(std::size_t{g.pages_per_block} * g.page_size_bytes);
    for (std::uint64_t lpn = 0; lpn < L; lpn += g.pages_per_block) {
      const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(g.pages_per_block, L - lpn));
      for (auto& byte : data) byte = static_cast<std::uint8_t>(random.next_u64());
      auto v = (*ftl)->write(Lpn(lpn), count, ConstByteSpan(data).first(std::size_t{count} * g.page_size_bytes));
      if (!v.is_ok()) return fail(v.status());
      for (std::uint32_t i = 0; i < count; ++i) {
        ledger->wrote(lpn + i, *v, format::xxh3(ConstByteSpan(data).subspan(i * g.page_size_bytes, g.page_size_bytes)), 0);
      }
    }
    if (Status s = (*ftl)->close(); !s.is_ok()) return fail(s);
    if (Status s = mark_clean_shutdown(true); !s.is_ok()) return fail(s);
    durable = (*ftl)->durable_seq();
    fmt::print("filled the {} logical pages and closed cleanly\n", L);
  }
  {
    if (Status s = mark_clean_shutdown(false); !s.is_ok()) return fail(s);
    auto store = open_image_store(paths.image, ImageAccess::read_write);
    if (!store.is_ok()) return fail(store.status());
    SimClock clock;
    SimulatedChip chip(store.value(), superblock.latency, clock);
    FaultPlan plan;
    plan.seed = seed;
    plan.cut_one_in = requests * 4;  // about half-way through the run, on average
    FaultyChip faulty(chip, plan);
    auto ftl = Ftl::open(faulty, clock, options);
    if (!ftl.is_ok()) return fail(ftl.status());
    const std::uint64_t L = (*ftl)->logical_pages();
    fmt::print("seed {}: {} logical pages, {} mapping, {} GC, {} device RAM ({}); running until the power fails\n",
               seed, L, format::mapping_scheme_name(options.mapping), format::gc_policy_name(options.gc),
               format_size(options.ram.budget_bytes), ram_policy_label(options.ram));
    std::vector<std::uint8_t> data;
    std::uint64_t writes = 0, reads = 0, flushes = 0;
    for (std::uint64_t r = 0; r < requests && !faulty.power_lost(); ++r) {
      const auto count = static_cast<std::uint32_t>(random.between(1, 16));
      const std::uint64_t lpn = random.uniform(L - count);
      data.resize(std::size_t{count} * g.page_size_bytes);
      const std::uint64_t choice = random.uniform(100);
      if (choice < 70) {
        for (auto& byte : data) byte = static_cast<std::uint8_t>(random.next_u64());
        auto hash = [&](std::uint32_t i) {
          return format::xxh3(ConstByteSpan(data).subspan(i * g.page_size_bytes, g.page_size_bytes));
        };
        auto v = (*ftl)->write(Lpn(lpn), count, data);
        if (!v.is_ok()) {
          for (std::uint32_t i = 0; i < count; ++i) ledger->in_flight(lpn + i, hash(i));
          break;
        }
        ++writes;
        durable = (*ftl)->durable_seq();
        for (std::uint32_t i = 0; i < count; ++i) ledger->wrote(lpn + i, *v, hash(i), durable);
      } else if (choice < 97) {
        if (!(*ftl)->read(Lpn(lpn), count, data).is_ok()) break;
        ++reads;
      } else {
        if (!(*ftl)->flush().is_ok()) break;
        ++flushes;
        durable = (*ftl)->durable_seq();
      }
    }
    const FtlStats stats = (*ftl)->stats();
    fmt::print("{} writes, {} reads, {} flushes acknowledged; {} GC runs, write amplification {:.2f}; "
               "durable watermark {}\n",
               writes, reads, flushes, stats.gc_runs, stats.write_amplification(), durable);
    fmt::print("{}\n", faulty.cut().describe());
  }

  // Power back on: a fresh chip over the same image, and recovery.
  auto store = open_image_store(paths.image, ImageAccess::read_write);
  if (!store.is_ok()) return fail(store.status());
  SimClock clock;
  SimulatedChip chip(store.value(), superblock.latency, clock);
  auto ftl = Ftl::open(chip, clock, options);
  if (!ftl.is_ok()) return fail(ftl.status());
  const bool recovery_sound = report_recovery(**ftl, "after the cut");

  std::vector<std::uint8_t> page(g.page_size_bytes);
  Status read_error;
  const Ledger::Verdict v = ledger->check(durable, [&](std::uint64_t lpn) {
    if (Status s = (*ftl)->read(Lpn(lpn), 1, page); !s.is_ok()) read_error = s;
    return format::xxh3(page);
  });
  if (!read_error.is_ok()) return fail(read_error);
  fmt::print("after recovery (the durable watermark at the cut was {}):\n", durable);
  fmt::print("  {} pages whose newest write was durable: {} intact, {} lost\n", v.durable_intact + v.durable_lost,
             v.durable_intact, v.durable_lost);
  fmt::print("  {} pages with a newer write still in the volatile device RAM or in flight: {} came back anyway, "
             "{} fell back to their durable write (allowed), {} lost\n",
             v.newer_came_back + v.fell_back + v.newer_lost, v.newer_came_back, v.fell_back, v.newer_lost);
  if (Status s = (*ftl)->close(); !s.is_ok()) return fail(s);
  if (Status s = mark_clean_shutdown(true); !s.is_ok()) return fail(s);
  return recovery_sound && v.durable_lost == 0 && v.newer_lost == 0 ? 0 : 2;
}
