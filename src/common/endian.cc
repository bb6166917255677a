#include "flashdir/endian.h"

#include <cassert>

namespace flashdir {

void LittleEndianWriter::put(std::uint64_t v, std::size_t width) {
  assert(offset_ + width <= out_.size());
  for (std::size_t i = 0; i < width; ++i) {
    out_[offset_ + i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  offset_ += width;
}

void LittleEndianWriter::bytes(ConstByteSpan b) {
  assert(offset_ + b.size() <= out_.size());
  if (!b.empty()) std::memcpy(out_.data() + offset_, b.data(), b.size());
  offset_ += b.size();
}

void LittleEndianWriter::zeros(std::size_t n) {
  assert(offset_ + n <= out_.size());
  std::memset(out_.data() + offset_, 0, n);
  offset_ += n;
}

std::uint64_t LittleEndianReader::get(std::size_t width) {
  assert(offset_ + width <= in_.size());
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) {
    v |= static_cast<std::uint64_t>(in_[offset_ + i]) << (8 * i);
  }
  offset_ += width;
  return v;
}

void LittleEndianReader::bytes(ByteSpan out) {
  assert(offset_ + out.size() <= in_.size());
  if (!out.empty()) std::memcpy(out.data(), in_.data() + offset_, out.size());
  offset_ += out.size();
}

void LittleEndianReader::skip(std::size_t n) {
  assert(offset_ + n <= in_.size());
  offset_ += n;
}

}  // namespace flashdir
