#include "store_rig.h"

#include <catch2/catch.hpp>

namespace flashdir::testing {

const char* scheme_label(cache::MetadataScheme scheme) {
  switch (scheme) {
    case cache::MetadataScheme::lufuw: return "lufuw";
    case cache::MetadataScheme::write_update: return "write-update";
    case cache::MetadataScheme::update_write_update: return "update-write-update";
  }
  return "?";
}

StoreRig::StoreRig(cache::MetadataScheme scheme, format::RamPolicy ram, std::optional<FaultPlan> plan,
                   std::uint64_t ram_budget_bytes, std::uint64_t blocks)
    : options(small_cache_options(format::MappingScheme::cftl, format::GcPolicy::dual_greedy, ram)),
      scheme_(scheme),
      geometry_(small_ftl_geometry(blocks)),
      chip_(Backend::memory, geometry_) {
  options.ram.budget_bytes = ram_budget_bytes;
  if (plan) faulty_ = std::make_unique<FaultyChip>(chip_.chip(), *plan);
  auto ftl = Ftl::format(chip(), chip_.clock(), options);
  REQUIRE(ftl.is_ok());
  ftl_ = std::move(ftl).value();
  auto layout = cache::SlotLayout::compute(ftl_->logical_pages(), geometry_.page_size_bytes);
  REQUIRE(layout.is_ok());
  layout_ = *layout;
  auto store = cache::MetadataStore::format(*ftl_, layout_, scheme);
  REQUIRE(store.is_ok());
  store_ = std::move(store).value();
}

Status StoreRig::write(cache::SlotIndex first, std::uint32_t count, std::uint64_t file_id, std::uint64_t first_page_no,
                       bool dirty, std::uint64_t version) {
  std::vector<cache::SlotWrite> writes(count);
  std::vector<cache::SlotIndex> slots(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    writes[i] = {first + i, {file_id, first_page_no + i, dirty}};
    slots[i] = first + i;
  }
  FLASHDIR_TRY(store_->before_data_write(writes));
  const Lpn lpn = layout_.data_lpn(first);
  auto seq = ftl_->write(lpn, count, run_data(geometry_, lpn.value, count, version));
  if (!seq.is_ok()) return seq.status();
  FLASHDIR_TRY(store_->after_data_write(slots, *seq));
  store_->on_durable(ftl_->durable_seq());
  return Status::ok();
}

std::optional<std::uint64_t> StoreRig::data_version(cache::SlotIndex slot) {
  std::vector<std::uint8_t> page(geometry_.page_size_bytes);
  const Lpn lpn = layout_.data_lpn(slot);
  if (!ftl_->read(lpn, 1, page).is_ok()) return std::nullopt;
  return version_of(lpn.value, page);
}

Result<cache::RecoveredSlots> StoreRig::power_cycle(std::optional<FaultPlan> plan,
                                                    cache::MetadataStore::DuplicateSearch search) {
  store_.reset();
  ftl_.reset();
  faulty_.reset();
  chip_.reopen();
  if (plan) faulty_ = std::make_unique<FaultyChip>(chip_.chip(), *plan);
  auto ftl = Ftl::open(chip(), chip_.clock(), options);
  if (!ftl.is_ok()) return ftl.status();
  ftl_ = std::move(ftl).value();
  auto opened = cache::MetadataStore::open(*ftl_, layout_, scheme_, search);
  if (!opened.is_ok()) return opened.status();
  store_ = std::move(opened->first);
  return std::move(opened->second);
}

Status StoreRig::close_clean() {
  FLASHDIR_TRY(ftl_->flush());
  FLASHDIR_TRY(store_->close_clean());
  return ftl_->close();
}

}  // namespace flashdir::testing
