#include "ghost_bitmap.h"

#include <bit>

namespace flashdir::ram {

GhostBitmap::GhostBitmap(std::uint64_t bits, std::uint64_t seed) : random_(seed) {
  const std::uint64_t rounded = std::bit_ceil(std::max<std::uint64_t>(bits, 64));
  words_.assign(rounded / 64, 0);
  mask_ = rounded - 1;
}

std::uint64_t GhostBitmap::bit_of(Lpn lpn) const {
  std::uint64_t x = lpn.value + 0x9E3779B97F4A7C15ULL;  // splitmix64 finaliser
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return (x ^ (x >> 31)) & mask_;
}

bool GhostBitmap::contains(Lpn lpn) const {
  const std::uint64_t bit = bit_of(lpn);
  return (words_[bit / 64] >> (bit % 64)) & 1;
}

void GhostBitmap::insert(Lpn lpn) {
  if (capacity_ == 0) return;
  const std::uint64_t bit = bit_of(lpn);
  std::uint64_t& word = words_[bit / 64];
  const std::uint64_t mask = std::uint64_t{1} << (bit % 64);
  if ((word & mask) == 0) {
    word |= mask;
    ++set_bits_;
  }
  ++size_;
  if (size_ > capacity_) shrink_to(capacity_);
}

void GhostBitmap::set_capacity(std::uint64_t entries) {
  capacity_ = entries;
  if (size_ > capacity_) shrink_to(capacity_);
}

void GhostBitmap::shrink_to(std::uint64_t entries) {
  size_ = entries;
  if (set_bits_ * kAlpha < entries) return;  // collisions already keep fewer bits than entries
  while (set_bits_ > entries) clear_random_bit();
}

void GhostBitmap::clear_random_bit() {
  std::uint64_t index = random_.uniform(words_.size());
  while (words_[index] == 0) index = (index + 1) % words_.size();
  const std::uint64_t word = words_[index];
  // The n-th set bit of the word, n random.
  std::uint64_t n = random_.uniform(static_cast<std::uint64_t>(std::popcount(word)));
  std::uint64_t rest = word;
  while (n-- > 0) rest &= rest - 1;
  words_[index] &= ~(rest & (~rest + 1));
  --set_bits_;
}

}  // namespace flashdir::ram
