#include "checksum.h"

#include <array>
#include <cassert>
#include <cstring>

#include "flashdir/format.h"

namespace flashdir::format {

std::uint64_t checksum_with_field_zeroed(ConstByteSpan record, std::size_t field_offset) {
  std::array<std::uint8_t, 256> copy;  // every record in format.h is smaller
  assert(record.size() <= copy.size() && field_offset + 8 <= record.size());
  std::memcpy(copy.data(), record.data(), record.size());
  std::memset(copy.data() + field_offset, 0, 8);
  return xxh3(ConstByteSpan(copy.data(), record.size()));
}

}  // namespace flashdir::format
