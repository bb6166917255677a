// A metadata store over a real FTL on a simulated chip, for tests: the write protocol in one
// call, deterministic slot data (the bytes of a slot name the write that put them there), and
// a power cycle that reopens chip, FTL and store.
#pragma once

#include <memory>
#include <optional>

#include "cache/meta/metadata_store.h"
#include "flashdir/nand/faulty_chip.h"
#include "ftl/ftl_harness.h"

namespace flashdir::testing {

inline constexpr cache::MetadataScheme kMetadataSchemes[] = {
    cache::MetadataScheme::lufuw, cache::MetadataScheme::write_update, cache::MetadataScheme::update_write_update};
const char* scheme_label(cache::MetadataScheme scheme);

class StoreRig {
 public:
  // With a plan, every chip operation goes through a FaultyChip.
  explicit StoreRig(cache::MetadataScheme scheme, format::RamPolicy ram = format::RamPolicy::tree,
                    std::optional<FaultPlan> plan = std::nullopt, std::uint64_t ram_budget_bytes = 2048,
                    std::uint64_t blocks = 64);

  Ftl& ftl() { return *ftl_; }
  cache::MetadataStore& store() { return *store_; }
  const cache::SlotLayout& layout() const { return layout_; }
  const Geometry& geometry() const { return geometry_; }
  NandChip& chip() { return faulty_ ? static_cast<NandChip&>(*faulty_) : chip_.chip(); }

  // The protocol for one run of consecutive slots: before_data_write, the FTL write of data
  // tagged `version`, after_data_write, on_durable. Returns the first failure.
  Status write(cache::SlotIndex first, std::uint32_t count, std::uint64_t file_id, std::uint64_t first_page_no,
               bool dirty, std::uint64_t version);
  // The version slot `slot`'s data holds (0: zeros), or nullopt if the FTL refused to read it.
  std::optional<std::uint64_t> data_version(cache::SlotIndex slot);
  // Drops the FTL and the store with whatever RAM they had (a power cut when the chip has lost
  // power, or a crash of the host), reopens the medium, the FTL and the store — through a new
  // FaultyChip if `plan` is given (to cut recovery itself).
  Result<cache::RecoveredSlots> power_cycle(
      std::optional<FaultPlan> plan = std::nullopt,
      cache::MetadataStore::DuplicateSearch search = cache::MetadataStore::DuplicateSearch::in_open);
  FaultyChip* faulty() { return faulty_.get(); }
  bool power_lost() const { return faulty_ != nullptr && faulty_->power_lost(); }
  // A clean close: FTL flush, store close_clean, FTL close.
  Status close_clean();

  FtlOptions options;

 private:
  cache::MetadataScheme scheme_;
  Geometry geometry_;
  TestChip chip_;
  std::unique_ptr<FaultyChip> faulty_;
  std::unique_ptr<Ftl> ftl_;
  cache::SlotLayout layout_;
  std::unique_ptr<cache::MetadataStore> store_;
};

}  // namespace flashdir::testing
