#include "flashdir/sim/chip_sizing.h"

#include <fmt/format.h>
#include <cmath>

#include "flashdir/ftl/ftl.h"
#include "flashdir/size.h"

namespace flashdir::sim {
namespace {

// 0 when the FTL cannot live on that many blocks.
std::uint64_t exported_pages(Geometry g, std::uint64_t blocks, std::uint16_t overprovision_permille) {
  g.block_count = blocks;
  auto logical = Ftl::logical_pages_for(g, overprovision_permille);
  return logical.is_ok() ? *logical : 0;
}

}  // namespace

std::uint64_t logical_pages_needed(std::uint64_t footprint_pages, double utilization) {
  const auto footprint = static_cast<double>(footprint_pages);
  auto needed = static_cast<std::uint64_t>(std::ceil(footprint / utilization));
  // The division rounds (900 / 0.9 is a hair above 1000): the smallest L with L x u >= F.
  while (needed > footprint_pages && static_cast<double>(needed - 1) * utilization >= footprint) --needed;
  return needed < footprint_pages ? footprint_pages : needed;
}

Result<std::uint64_t> blocks_for_logical_pages(const Geometry& shape, std::uint16_t overprovision_permille,
                                               std::uint64_t logical_pages) {
  // Physical page numbers are 32-bit in translation pages: the largest chip the FTL maps.
  const std::uint64_t max_blocks = (0xFFFFFFFFULL - 1) / shape.pages_per_block;
  if (exported_pages(shape, max_blocks, overprovision_permille) < logical_pages) {
    return Status::invalid_argument(fmt::format(
        "{} logical pages ({}) exceed what the FTL maps on {}-byte pages; use larger pages", logical_pages,
        format_size(logical_pages * shape.page_size_bytes), shape.page_size_bytes));
  }
  // The exported space grows with the block count (checkpoint slots grow slower than the
  // pool), so a doubling search and a bisection find the smallest chip.
  std::uint64_t low = kMinAutoBlocks;  // candidate
  if (exported_pages(shape, low, overprovision_permille) >= logical_pages) return low;
  std::uint64_t high = low;  // invariant: `low` too small, `high` enough
  while (exported_pages(shape, high, overprovision_permille) < logical_pages) {
    low = high;
    high = std::min(high * 2, max_blocks);
  }
  while (high - low > 1) {
    const std::uint64_t mid = low + (high - low) / 2;
    (exported_pages(shape, mid, overprovision_permille) >= logical_pages ? high : low) = mid;
  }
  return high;
}

Status check_span_fits(const Geometry& chip, std::uint64_t logical_pages, const CompactTrace& trace) {
  if (trace.footprint_pages() <= logical_pages) return Status::ok();
  const std::uint32_t page = chip.page_size_bytes;
  return Status::invalid_argument(fmt::format(
      "the chip ({}) is too small: its logical space holds {} pages ({}), the trace's compacted span "
      "needs {} ({} chunks of {} pages; the trace touches {} pages, {})",
      chip.describe(), logical_pages, format_size(logical_pages * page), trace.footprint_pages(),
      trace.chunk_count, trace.pages_per_chunk, trace.touched_pages, format_size(trace.touched_pages * page)));
}

}  // namespace flashdir::sim
