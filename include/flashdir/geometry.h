// The shape and speed of a simulated NAND chip. Both are chosen at format time, recorded in
// the superblock and the image header, and validated wherever they enter the program.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir {

// Pages are the unit of read and program, blocks the unit of erase. Every page carries an
// out-of-band (OOB) area for the FTL's per-page record (format.h: OobRecord).
struct Geometry {
  static constexpr std::uint32_t kDefaultPageSizeBytes = 4096;
  static constexpr std::uint32_t kDefaultOobSizeBytes = 64;
  static constexpr std::uint32_t kDefaultPagesPerBlock = 128;
  static constexpr std::uint32_t kMinPageSizeBytes = 512;
  static constexpr std::uint32_t kMaxPageSizeBytes = 64 * 1024;
  static constexpr std::uint32_t kMaxOobSizeBytes = 4096;
  static constexpr std::uint32_t kMinPagesPerBlock = 2;
  static constexpr std::uint32_t kMaxPagesPerBlock = 65536;
  // Bounds every byte offset of an image: 2^40 pages of at most 64 KiB (+4 KiB OOB) fit in 2^57.
  static constexpr std::uint64_t kMaxPageCount = std::uint64_t{1} << 40;
  static constexpr std::uint64_t max_block_count(std::uint32_t pages_per_block) {
    return kMaxPageCount / pages_per_block;
  }

  std::uint32_t page_size_bytes = kDefaultPageSizeBytes;
  std::uint32_t oob_size_bytes = kDefaultOobSizeBytes;
  std::uint32_t pages_per_block = kDefaultPagesPerBlock;
  std::uint64_t block_count = 0;

  // Checks every field; the message names the bad value and the accepted range.
  Status validate() const;
  // The checks of single fields, for callers that name the field their own way (mkfs options).
  static Status check_page_size(std::uint32_t page_size_bytes);
  static Status check_oob_size(std::uint32_t oob_size_bytes);
  static Status check_pages_per_block(std::uint32_t pages_per_block);

  std::uint64_t block_size_bytes() const { return std::uint64_t{page_size_bytes} * pages_per_block; }
  std::uint64_t page_count() const { return block_count * pages_per_block; }
  std::uint64_t capacity_bytes() const { return block_count * block_size_bytes(); }

  BlockNumber block_of(Ppn ppn) const { return BlockNumber(ppn.value / pages_per_block); }
  std::uint32_t page_in_block(Ppn ppn) const { return static_cast<std::uint32_t>(ppn.value % pages_per_block); }
  Ppn first_page(BlockNumber block) const { return Ppn(block.value * pages_per_block); }
  Ppn page_at(BlockNumber block, std::uint32_t page_index) const {
    return Ppn(block.value * pages_per_block + page_index);
  }

  bool operator==(const Geometry&) const = default;
  std::string describe() const;  // "64 MiB: 128 blocks x 128 pages x 4096 B (+64 B OOB)"
};

// Stored in the superblock: values are permanent, never renumber.
enum class LatencyPreset : std::uint8_t { zero = 0, slc = 1, mlc = 2, custom = 3 };
static_assert(static_cast<int>(LatencyPreset::zero) == 0 && static_cast<int>(LatencyPreset::slc) == 1 &&
              static_cast<int>(LatencyPreset::mlc) == 2 && static_cast<int>(LatencyPreset::custom) == 3);

// Time the chip is busy for each operation, in microseconds of simulated time.
struct LatencyProfile {
  LatencyPreset preset = LatencyPreset::slc;
  std::uint32_t read_us = 0;
  std::uint32_t program_us = 0;
  std::uint32_t erase_us = 0;

  // SLC 25/200/1500 us (papers/cftl.txt Table 2); MLC 50/900/3500 us (typical 2-bit cells);
  // zero for functional tests and pure-speed trace replay.
  static LatencyProfile of(LatencyPreset preset);
  static Result<LatencyProfile> parse(std::string_view name);  // "slc", "mlc", "zero"
  bool operator==(const LatencyProfile&) const = default;
};

const char* latency_preset_name(LatencyPreset preset);

}  // namespace flashdir
