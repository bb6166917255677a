// Internal to src/format: counts the bytes an encoder writes, at compile time. Each record's
// fields are written by a function template over its writer; run with LittleEndianWriter it
// encodes, run with ByteCounter in a constant expression it measures, so a static_assert ties
// what the encoder writes to the sizes and offsets format.h declares.
#pragma once

#include <cstddef>
#include <cstdint>

#include "flashdir/types.h"

namespace flashdir::format {

struct ByteCounter {
  std::size_t count = 0;

  constexpr void u8(std::uint8_t) { count += 1; }
  constexpr void u16(std::uint16_t) { count += 2; }
  constexpr void u32(std::uint32_t) { count += 4; }
  constexpr void u64(std::uint64_t) { count += 8; }
  constexpr void bytes(ConstByteSpan b) { count += b.size(); }
  constexpr void zeros(std::size_t n) { count += n; }
};

// The bytes `write` puts out for a default-constructed Record, e.g.
// bytes_written(write_oob_fields<ByteCounter>).
template <typename Record>
constexpr std::size_t bytes_written(void (*write)(ByteCounter&, const Record&)) {
  ByteCounter counter;
  write(counter, Record{});
  return counter.count;
}

}  // namespace flashdir::format
