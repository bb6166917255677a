#include <algorithm>
#include <fmt/format.h>

#include "flashdir/cache_dir.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/size.h"

namespace flashdir {
namespace {

Status for_option(const char* option, Status status) { return status.is_ok() ? status : status.with_context(option); }

}  // namespace

Result<Geometry> FormatOptions::checked_geometry() const {
  FLASHDIR_TRY(for_option("--page-size", Geometry::check_page_size(page_size_bytes)));
  FLASHDIR_TRY(for_option("--oob-size", Geometry::check_oob_size(oob_size_bytes)));
  FLASHDIR_TRY(for_option("--pages-per-block", Geometry::check_pages_per_block(pages_per_block)));
  Geometry geometry{page_size_bytes, oob_size_bytes, pages_per_block, 0};
  const std::uint64_t block_bytes = geometry.block_size_bytes();
  const std::string block_shape =
      fmt::format("--pages-per-block {} x --page-size {}", pages_per_block, format_size(page_size_bytes));
  if (capacity_bytes % block_bytes != 0) {
    return Status::invalid_argument(fmt::format("--size {} B is not a whole number of {} blocks ({})", capacity_bytes,
                                                format_size(block_bytes), block_shape));
  }
  geometry.block_count = capacity_bytes / block_bytes;
  if (geometry.block_count < kMinimumCacheBlocks) {
    return Status::invalid_argument(
        fmt::format("--size {} holds {} blocks of {} ({}); a cache needs at least {} blocks ({})",
                    format_size(capacity_bytes), geometry.block_count, format_size(block_bytes), block_shape,
                    kMinimumCacheBlocks, format_size(kMinimumCacheBlocks * block_bytes)));
  }
  FLASHDIR_TRY(for_option("--size", geometry.validate()));
  FLASHDIR_TRY(for_option("--size", Ftl::logical_pages_for(geometry, 0).status()));
  if (overprovision_permille) {
    if (*overprovision_permille > kMaxOverprovisionPermille) {
      return Status::invalid_argument(fmt::format("--op {}% is above the maximum of {}%",
                                                  *overprovision_permille / 10.0, kMaxOverprovisionPermille / 10.0));
    }
    const std::uint16_t minimum = Ftl::minimum_overprovision_permille(geometry).value();
    if (*overprovision_permille < minimum) {
      return Status::invalid_argument(fmt::format(
          "--op {}% leaves garbage collection too little room on {} blocks of {}: this chip needs at least {}% "
          "(doc/ftl.md)",
          *overprovision_permille / 10.0, geometry.block_count, format_size(block_bytes), minimum / 10.0));
    }
  }
  FLASHDIR_TRY(for_option("--op", Ftl::logical_pages_for(geometry, overprovision_for(geometry)).status()));
  return geometry;
}

std::uint16_t FormatOptions::overprovision_for(const Geometry& geometry) const {
  if (overprovision_permille) return *overprovision_permille;
  return std::max(kDefaultOverprovisionPermille, Ftl::minimum_overprovision_permille(geometry).value());
}

}  // namespace flashdir
