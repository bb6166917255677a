// The content of a translation page: entries_per_translation_page little-endian u32 PPNs
// (kUnmappedPpn where the LPN has no data), for the LPNs [tpn * E, (tpn + 1) * E).
#pragma once

#include <cstdint>
#include <span>

#include "flashdir/types.h"

namespace flashdir::ftl {

void encode_translation_page(std::span<const std::uint32_t> entries, ByteSpan out);
void decode_translation_page(ConstByteSpan in, std::span<std::uint32_t> entries);

}  // namespace flashdir::ftl
