#include "flashdir/endian.h"

#include <cassert>

namespace flashdir {

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

void LittleEndianReader::bytes(ByteSpan out) {
  assert(offset_ + out.size() <= in_.size());
  if (!out.empty()) std::memcpy(out.data(), in_.data() + offset_, out.size());
  offset_ += out.size();
}

}  // namespace flashdir
