// The rules of a NAND chip, shared by every NandChip implementation.
#include <algorithm>
#include <fmt/format.h>

#include "flashdir/nand/chip.h"
#include "flashdir/nand/page_store.h"

namespace flashdir {
namespace {

Status check_run(const Geometry& g, const char* operation, Ppn first, std::uint32_t count) {
  const std::uint64_t pages = g.page_count();
  if (count == 0) return Status::invalid_argument(fmt::format("{} of zero pages", operation));
  if (first.value >= pages || count > pages - first.value) {
    return Status::invalid_argument(fmt::format("{} of pages [{}, {}) is out of range (chip has {} pages)", operation,
                                                first.value, first.value + count, pages));
  }
  return Status::ok();
}

Status check_buffer(const char* operation, const char* what, std::size_t actual, std::size_t expected,
                    bool may_be_empty) {
  if (actual == expected || (may_be_empty && actual == 0)) return Status::ok();
  return Status::invalid_argument(fmt::format("{} needs a {} buffer of {} bytes{}, got {}", operation, what, expected,
                                              may_be_empty ? " (or none)" : "", actual));
}

Status not_concurrent() {
  return Status::invalid_argument(
      "this chip does not allow concurrent reads (it must see every operation, or its store cannot serve them)");
}

}  // namespace

Status NandChip::check_read(Ppn first, std::uint32_t count, std::size_t data_bytes, std::size_t oob_bytes) const {
  const Geometry& g = geometry();
  FLASHDIR_TRY(check_run(g, "read", first, count));
  FLASHDIR_TRY(check_buffer("read", "data", data_bytes, std::size_t{count} * g.page_size_bytes, true));
  FLASHDIR_TRY(check_buffer("read", "OOB", oob_bytes, std::size_t{count} * g.oob_size_bytes, true));
  if (data_bytes == 0 && oob_bytes == 0) {
    return Status::invalid_argument("read with neither a data nor an OOB buffer");
  }
  return Status::ok();
}

Status NandChip::check_program(Ppn first, std::uint32_t count, std::size_t data_bytes, std::size_t oob_bytes) const {
  const Geometry& g = geometry();
  FLASHDIR_TRY(check_run(g, "program", first, count));
  FLASHDIR_TRY(check_buffer("program", "data", data_bytes, std::size_t{count} * g.page_size_bytes, !stores_data()));
  FLASHDIR_TRY(check_buffer("program", "OOB", oob_bytes, std::size_t{count} * g.oob_size_bytes, false));
  // A run may span blocks; each block's part must start at that block's write pointer.
  for (std::uint64_t done = 0; done < count;) {
    const Ppn page = first + done;
    const BlockNumber block = g.block_of(page);
    const std::uint32_t index = g.page_in_block(page);
    const std::uint32_t expected = next_page(block);
    if (index != expected) {
      return Status::invalid_argument(
          fmt::format("program of page {} (block {}, page {}) is out of order or not erased: "
                      "the next programmable page of block {} is {}",
                      page.value, block.value, index, block.value,
                      expected < g.pages_per_block ? fmt::to_string(expected) : std::string("none (block full)")));
    }
    done += std::min<std::uint64_t>(count - done, g.pages_per_block - index);
  }
  return Status::ok();
}

Status NandChip::check_erase(BlockNumber block) const {
  if (block.value >= geometry().block_count) {
    return Status::invalid_argument(
        fmt::format("erase of block {} is out of range (chip has {} blocks)", block.value, geometry().block_count));
  }
  return Status::ok();
}

Status NandChip::read_concurrently(Ppn /*first*/, std::uint32_t /*count*/, ByteSpan /*data*/, ByteSpan /*oob*/) const {
  return not_concurrent();
}

Status NandChip::charge_reads(std::uint32_t /*pages*/) {
  return not_concurrent();
}

Status PageStore::read_pages_concurrently(Ppn /*first*/, std::uint32_t /*count*/, ByteSpan /*data*/,
                                          ByteSpan /*oob*/) const {
  return not_concurrent();
}

}  // namespace flashdir
