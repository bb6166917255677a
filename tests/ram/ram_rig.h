// RAM policies under test without an FTL: translation pages live in a map, and a tiny layout
// keeps the numbers readable (512-byte pages: 128 entries per translation page).
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <vector>

#include "ftl/mapcache/entry_cache.h"
#include "ftl/layout.h"
#include "ftl/ram/ram_manager.h"
#include "ftl/ram/ram_policies.h"

namespace flashdir::testing {

class FakeTranslationPages final : public ftl::TranslationPages {
 public:
  explicit FakeTranslationPages(std::uint32_t entries) : entries_(entries) {}
  Status read(std::uint64_t tpn, std::span<std::uint32_t> out) override {
    ++reads;
    gc_reads += charging_gc ? 1 : 0;
    auto it = pages.find(tpn);
    if (it == pages.end()) std::fill(out.begin(), out.end(), ftl::kUnmappedPpn);
    else std::copy(it->second.begin(), it->second.end(), out.begin());
    return Status::ok();
  }
  Status write(std::uint64_t tpn, std::span<const std::uint32_t> in) override {
    ++writes;
    gc_writes += charging_gc ? 1 : 0;
    written.push_back(tpn);
    pages[tpn].assign(in.begin(), in.end());
    return Status::ok();
  }
  void charge_to_gc(bool gc) override { charging_gc = gc; }
  std::map<std::uint64_t, std::vector<std::uint32_t>> pages;
  std::vector<std::uint64_t> written;
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t gc_reads = 0;   // ... of them, charged to GC (TranslationPages::charge_to_gc)
  std::uint64_t gc_writes = 0;
  bool charging_gc = false;

 private:
  std::uint32_t entries_;
};

// The rig's page size and translation-page entries, for budgets and LPNs in tests.
inline constexpr std::uint64_t kPage = 512;
inline constexpr std::uint64_t E = 128;

struct RamRig {
  ftl::FtlLayout layout;
  FtlOptions options;
  FtlStats stats;
  FakeTranslationPages pages;
  std::unique_ptr<ram::RamManager> ram;

  RamRig(format::RamPolicy policy, std::uint64_t budget_bytes,
         format::MappingScheme mapping = format::MappingScheme::dftl, bool relocation_log = false)
      : layout(ftl::FtlLayout::compute(Geometry{512, 64, 16, 256}, 70).value()),
        pages(layout.entries_per_translation_page) {
    options.mapping = mapping;
    options.ram.tree_relocation_log = relocation_log;
    options.ram.policy = policy;
    options.ram.budget_bytes = budget_bytes;
    options.ram.aps_interval_requests = 100;
    auto made = ram::make_ram_manager(layout, options, LatencyProfile::of(LatencyPreset::slc), pages, stats);
    ram = std::move(made).value();
  }

  // Buffers a page of `lpn` as write `version` (no data: these tests watch the bookkeeping).
  std::optional<std::uint64_t> put(std::uint64_t lpn, std::uint64_t version) {
    ram::BufferedPage page;
    page.lpn = Lpn(lpn);
    page.version = page.pending_since = version;
    return ram->put(std::move(page)).value();
  }

  // Evicts and returns the LPNs of the data pages handed back; the FTL would program them and
  // record their new place (here: PPN = 1000 + LPN).
  std::vector<std::uint64_t> evict() {
    std::vector<std::uint64_t> lpns;
    std::vector<ram::BufferedPage> victims;
    REQUIRE(ram->evict(victims).is_ok());
    for (auto& page : victims) {
      lpns.push_back(page.lpn.value);
      (void)ram->lookup(page.lpn, ftl::Access::flush);
      ram->set(page.lpn, static_cast<std::uint32_t>(1000 + page.lpn.value));
    }
    return lpns;
  }

  // Evicts until the budget holds, as the FTL does after every request.
  void settle() {
    while (!evict().empty()) {
    }
  }
};

}  // namespace flashdir::testing
