// Internal to src/format: the checksum rule shared by every record.
#pragma once

#include <cstddef>
#include <cstdint>

#include "flashdir/types.h"

namespace flashdir::format {

// XXH3-64 of `record` with the 8-byte checksum field at `field_offset` read as zero.
std::uint64_t checksum_with_field_zeroed(ConstByteSpan record, std::size_t field_offset);
// The same for a record of any size (a whole page), without copying it.
std::uint64_t page_checksum_with_field_zeroed(ConstByteSpan page, std::size_t field_offset);

}  // namespace flashdir::format
