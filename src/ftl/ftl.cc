// The public face of the FTL (include/flashdir/ftl/ftl.h).
#include "flashdir/ftl/ftl.h"

#include <charconv>
#include <fmt/format.h>

#include "ftl_core.h"

namespace flashdir {

Status RamOptions::validate() const {
  if (static_mapping_percent > 100) {
    return Status::invalid_argument(fmt::format("static mapping share {}% exceeds 100%", static_mapping_percent));
  }
  if (aps_interval_requests == 0) return Status::invalid_argument("APS interval of 0 requests");
  return Status::ok();
}

Status parse_ram_policy(std::string_view text, RamOptions& options) {
  if (text == "tree") {
    options.policy = format::RamPolicy::tree;
  } else if (text == "stack") {
    options.policy = format::RamPolicy::stack;
  } else if (text == "aps") {
    options.policy = format::RamPolicy::aps;
  } else if (text.starts_with("static:")) {
    const std::string_view percent = text.substr(7);
    unsigned value = 0;
    const auto [end, error] = std::from_chars(percent.data(), percent.data() + percent.size(), value);
    if (error != std::errc() || end != percent.data() + percent.size() || value > 100) {
      return Status::invalid_argument(fmt::format("RAM policy '{}': static:P needs P in 0..100", text));
    }
    options.policy = format::RamPolicy::static_split;
    options.static_mapping_percent = static_cast<std::uint8_t>(value);
  } else {
    return Status::invalid_argument(fmt::format("unknown RAM policy '{}' (expected tree, stack, aps or static:P)", text));
  }
  return Status::ok();
}

std::string ram_policy_label(const RamOptions& options) {
  if (options.policy == format::RamPolicy::static_split) return fmt::format("static:{}", options.static_mapping_percent);
  return format::ram_policy_name(options.policy);
}

std::string_view consolidation_mode_name(ConsolidationMode mode) {
  switch (mode) {
    case ConsolidationMode::off: return "off";
    case ConsolidationMode::gc: return "gc";
    case ConsolidationMode::eager: return "eager";
  }
  return "?";
}

Result<ConsolidationMode> parse_consolidation_mode(std::string_view text) {
  for (ConsolidationMode mode : {ConsolidationMode::off, ConsolidationMode::gc, ConsolidationMode::eager}) {
    if (text == consolidation_mode_name(mode)) return mode;
  }
  return Status::invalid_argument(fmt::format("unknown consolidation mode '{}' (expected off, gc or eager)", text));
}

Status FtlOptions::validate() const {
  FLASHDIR_TRY(ram.validate());
  if (overprovision_permille >= 1000) {
    return Status::invalid_argument(fmt::format("over-provisioning {} per mille is not below 1000", overprovision_permille));
  }
  if (cftl.cbmt_share_percent > 100) {
    return Status::invalid_argument(fmt::format("CBMT share {}% exceeds 100%", cftl.cbmt_share_percent));
  }
  return Status::ok();
}

namespace {

Result<std::unique_ptr<ftl::FtlCore>> make_core(NandChip& chip, SimClock& clock, const FtlOptions& options) {
  FLASHDIR_TRY(options.validate());
  auto layout = ftl::FtlLayout::compute(chip.geometry(), options.overprovision_permille);
  if (!layout.is_ok()) return layout.status();
  return std::make_unique<ftl::FtlCore>(chip, clock, options, layout.value(), chip.latency());
}

}  // namespace

Ftl::Ftl(std::unique_ptr<ftl::FtlCore> core, const FtlOptions& options) : core_(std::move(core)), options_(options) {}
Ftl::~Ftl() = default;

Result<std::unique_ptr<Ftl>> Ftl::format(NandChip& chip, SimClock& clock, const FtlOptions& options) {
  auto core = make_core(chip, clock, options);
  if (!core.is_ok()) return core.status();
  FLASHDIR_TRY((*core)->format());
  return std::unique_ptr<Ftl>(new Ftl(std::move(core).value(), options));
}

Result<std::unique_ptr<Ftl>> Ftl::open(NandChip& chip, SimClock& clock, const FtlOptions& options) {
  auto core = make_core(chip, clock, options);
  if (!core.is_ok()) return core.status();
  FLASHDIR_TRY((*core)->open());
  return std::unique_ptr<Ftl>(new Ftl(std::move(core).value(), options));
}

Result<std::unique_ptr<Ftl>> Ftl::rebuild(NandChip& chip, SimClock& clock, const FtlOptions& options) {
  auto core = make_core(chip, clock, options);
  if (!core.is_ok()) return core.status();
  FLASHDIR_TRY((*core)->rebuild_from_scan());
  return std::unique_ptr<Ftl>(new Ftl(std::move(core).value(), options));
}

Result<std::uint64_t> Ftl::logical_pages_for(const Geometry& geometry, std::uint16_t overprovision_permille) {
  auto layout = ftl::FtlLayout::compute(geometry, overprovision_permille);
  if (!layout.is_ok()) return layout.status();
  return layout->logical_pages;
}

Result<std::uint16_t> Ftl::minimum_overprovision_permille(const Geometry& geometry) {
  auto layout = ftl::FtlLayout::compute(geometry, 0);
  if (!layout.is_ok()) return layout.status();
  return layout->minimum_overprovision_permille();
}

std::uint64_t Ftl::logical_pages() const { return core_->layout().logical_pages; }
std::uint32_t Ftl::page_size_bytes() const { return core_->chip().geometry().page_size_bytes; }
std::uint32_t Ftl::pages_per_block() const { return core_->chip().geometry().pages_per_block; }
Status Ftl::read(Lpn first, std::uint32_t count, ByteSpan data) { return core_->read(first, count, data); }
Status Ftl::prepare_read(Lpn first, std::uint32_t count, ByteSpan data, PreparedRead& read) {
  return core_->prepare_read(first, count, data, read);
}
void Ftl::read_prepared(PreparedRead& read, ByteSpan data) const { core_->read_prepared(read, data); }
Status Ftl::finish_read(PreparedRead& read, ByteSpan data) { return core_->finish_read(read, data); }
Result<std::uint64_t> Ftl::write(Lpn first, std::uint32_t count, ConstByteSpan data, WriteHint hint,
                                 Durability durability) {
  return core_->write(first, count, data, hint, durability);
}
Status Ftl::make_durable(Lpn first, std::uint32_t count) { return core_->make_durable(first, count); }
Status Ftl::trim(Lpn first, std::uint32_t count) { return core_->trim(first, count); }
Status Ftl::flush() { return core_->flush(); }
bool Ftl::checkpoint_due() const { return core_->checkpoint_due(); }
std::uint64_t Ftl::durable_seq() const { return core_->durable_sequence(); }
Status Ftl::close() { return core_->close(); }
FtlStats Ftl::stats() const { return core_->stats(); }
Ftl::RamSplit Ftl::ram_split() const {
  const ram::RamUsage usage = core_->ram().usage();
  return {usage.budget_bytes, usage.mapping_bytes, usage.buffer_bytes, usage.mapping_partition_bytes};
}
const RecoveryReport& Ftl::recovery() const { return core_->recovery_report(); }
std::uint64_t Ftl::checkpoint_generation() const { return core_->checkpoint_generation(); }
std::vector<Lpn> Ftl::lost_lpns() const {
  std::vector<Lpn> lost;
  lost.reserve(core_->lost_lpns().size());
  for (std::uint64_t lpn : core_->lost_lpns()) lost.emplace_back(lpn);
  return lost;
}
std::vector<Lpn> Ftl::take_newly_lost_lpns() { return core_->take_newly_lost_lpns(); }

}  // namespace flashdir
