#include "durability_check.h"

#include <fmt/format.h>

#include "check/ftl_check.h"
#include "flashdir/format.h"
#include "ftl/ftl_core.h"
#include "ftl/mapcache/entry_cache.h"
#include "ftl_harness.h"

namespace flashdir::testing {

namespace {

// The version of `lpn` by its page's OOB record (the read before it verified the record).
Result<std::uint64_t> version_by_record(Ftl& ftl, Lpn lpn) {
  ftl::FtlCore& core = ftl.core();
  auto ppn = core.ram().lookup(lpn, ftl::Access::internal);
  if (!ppn.is_ok()) return ppn.status();
  if (*ppn == ftl::kUnmappedPpn) return std::uint64_t{0};
  std::vector<std::uint8_t> oob(core.layout().geometry.oob_size_bytes);
  FLASHDIR_TRY(core.chip().read(Ppn(*ppn), 1, {}, oob));
  auto record = format::decode_oob(oob);
  if (!record.is_ok()) return record.status();
  return record->version;
}

}  // namespace

std::string verify_and_settle(Ftl& ftl, Oracle& oracle, std::uint64_t durable) {
  const Geometry& g = ftl.core().layout().geometry;
  const bool by_record = !ftl.core().chip().stores_data();
  std::vector<std::uint8_t> buffer(16 * g.page_size_bytes);
  std::vector<std::uint64_t> read(oracle.size());
  for (std::uint64_t first = 0; first < oracle.size(); first += 16) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(16, oracle.size() - first));
    const ByteSpan span = ByteSpan(buffer).first(std::size_t{count} * g.page_size_bytes);
    if (Status s = ftl.read(Lpn(first), count, span); !s.is_ok()) return s.to_string();
    for (std::uint32_t i = 0; i < count; ++i) {
      if (by_record) {
        auto version = version_by_record(ftl, Lpn(first + i));
        if (!version.is_ok()) return version.status().to_string();
        read[first + i] = *version;
      } else {
        read[first + i] = version_of(first + i, span.subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes));
      }
      if (!oracle.allows(first + i, read[first + i], durable)) {
        return fmt::format("LPN {} reads version {} which the contract does not allow (durable watermark {}; {})",
                           first + i, read[first + i], durable, oracle.describe(first + i));
      }
    }
  }
  for (std::uint64_t lpn = 0; lpn < read.size(); ++lpn) oracle.settle(lpn, read[lpn]);
  return {};
}

std::string fsck_errors(NandChip& chip, const FtlOptions& options) {
  format::Superblock superblock;
  superblock.overprovision_permille = options.overprovision_permille;
  CheckReport report;
  check_ftl(chip, superblock, CheckOptions{}, report);
  std::string errors;
  for (const std::string& error : report.errors) errors += error + "\n";
  return errors;
}

}  // namespace flashdir::testing
