#include "translation_page.h"

#include <bit>
#include <cassert>
#include <cstring>

#include "flashdir/endian.h"

namespace flashdir::ftl {

void encode_translation_page(std::span<const std::uint32_t> entries, ByteSpan out) {
  assert(out.size() == entries.size() * sizeof(std::uint32_t));
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out.data(), entries.data(), out.size());
  } else {
    LittleEndianWriter w(out);
    for (std::uint32_t e : entries) w.u32(e);
  }
}

void decode_translation_page(ConstByteSpan in, std::span<std::uint32_t> entries) {
  assert(in.size() == entries.size() * sizeof(std::uint32_t));
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(entries.data(), in.data(), in.size());
  } else {
    LittleEndianReader r(in);
    for (auto& e : entries) e = r.u32();
  }
}

}  // namespace flashdir::ftl
