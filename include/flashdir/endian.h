// Explicit little-endian encoding for on-media records. Every record in format.h is written
// and read through these, never by copying a struct, so the bytes on media do not depend on
// the host's byte order, padding or compiler.
#pragma once

#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>

#include "flashdir/types.h"

namespace flashdir {

// Appends fields at a moving offset into a fixed buffer. The caller sizes the buffer; an
// overflow is a programming error and asserts.
class LittleEndianWriter {
 public:
  explicit LittleEndianWriter(ByteSpan out) : out_(out) {}

  void u8(std::uint8_t v) { put<1>(v); }
  void u16(std::uint16_t v) { put<2>(v); }
  void u32(std::uint32_t v) { put<4>(v); }
  void u64(std::uint64_t v) { put<8>(v); }
  void bytes(ConstByteSpan b);
  void zeros(std::size_t n);
  std::size_t offset() const { return offset_; }

 private:
  // Inline: these run for every OOB record of every page the FTL touches. On a little-endian
  // host the field's bytes are its low `width` bytes in memory order: one store (the width a
  // constant, so that memcpy compiles to it rather than to a call).
  template <std::size_t width>
  void put(std::uint64_t v) {
    assert(offset_ + width <= out_.size());
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(out_.data() + offset_, &v, width);
    } else {
      for (std::size_t i = 0; i < width; ++i) out_[offset_ + i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
    offset_ += width;
  }
  ByteSpan out_;
  std::size_t offset_ = 0;
};

// Reads fields at a moving offset. Reading past the end is a programming error and asserts:
// record sizes are fixed and checked before decoding starts.
class LittleEndianReader {
 public:
  explicit LittleEndianReader(ConstByteSpan in) : in_(in) {}

  std::uint8_t u8() { return static_cast<std::uint8_t>(get<1>()); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get<2>()); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get<4>()); }
  std::uint64_t u64() { return get<8>(); }
  void bytes(ByteSpan out);
  void skip(std::size_t n) {
    assert(offset_ + n <= in_.size());
    offset_ += n;
  }
  std::size_t offset() const { return offset_; }
  std::size_t remaining() const { return in_.size() - offset_; }

 private:
  // A constant width, as in put (decoding every metadata page at a restart spent 7-12% of it
  // in calls to memcpy).
  template <std::size_t width>
  std::uint64_t get() {
    assert(offset_ + width <= in_.size());
    std::uint64_t v = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&v, in_.data() + offset_, width);
    } else {
      for (std::size_t i = 0; i < width; ++i) v |= static_cast<std::uint64_t>(in_[offset_ + i]) << (8 * i);
    }
    offset_ += width;
    return v;
  }
  ConstByteSpan in_;
  std::size_t offset_ = 0;
};

}  // namespace flashdir
