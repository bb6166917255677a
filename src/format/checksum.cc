#include "checksum.h"

#include <array>
#include <cassert>
#include <cstring>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "flashdir/format.h"

namespace flashdir::format {

std::uint64_t checksum_with_field_zeroed(ConstByteSpan record, std::size_t field_offset) {
  std::array<std::uint8_t, 256> copy;  // every record in format.h is smaller
  assert(record.size() <= copy.size() && field_offset + 8 <= record.size());
  std::memcpy(copy.data(), record.data(), record.size());
  std::memset(copy.data() + field_offset, 0, 8);
  return xxh3(ConstByteSpan(copy.data(), record.size()));
}

std::uint64_t page_checksum_with_field_zeroed(ConstByteSpan page, std::size_t field_offset) {
  assert(field_offset + 8 <= page.size());
  // Streamed: a page is too large for the copy above, and hashing it in three pieces is what
  // hashing a copy with the field zeroed would give.
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  const std::uint8_t zeros[8] = {};
  XXH3_64bits_update(&state, page.data(), field_offset);
  XXH3_64bits_update(&state, zeros, sizeof zeros);
  XXH3_64bits_update(&state, page.data() + field_offset + 8, page.size() - field_offset - 8);
  return XXH3_64bits_digest(&state);
}

}  // namespace flashdir::format
