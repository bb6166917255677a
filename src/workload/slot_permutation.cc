#include "slot_permutation.h"

#include <bit>
#include <cassert>

#include "flashdir/random.h"

namespace flashdir::sim::detail {
namespace {

// The murmur3 / splitmix64 finaliser: every input bit affects every output bit.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

SlotPermutation::SlotPermutation(std::uint64_t n, std::uint64_t seed) : n_(n) {
  assert(n >= 1);
  const int bits = n <= 1 ? 1 : static_cast<int>(std::bit_width(n - 1));  // of the largest index
  half_bits_ = (bits + 1) / 2;
  half_mask_ = half_bits_ >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << half_bits_) - 1;
  SeededRandom random(seed);
  for (auto& key : keys_) key = random.next_u64();
}

std::uint64_t SlotPermutation::feistel(std::uint64_t value) const {
  std::uint64_t left = value >> half_bits_;
  std::uint64_t right = value & half_mask_;
  for (std::uint64_t key : keys_) {
    const std::uint64_t next_right = left ^ (mix(right ^ key) & half_mask_);
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

std::uint64_t SlotPermutation::operator()(std::uint64_t index) const {
  assert(index < n_);
  // The domain is at most 4n (2^(2*half_bits) < 4n), so a walk takes fewer than 4 steps on
  // average; it ends because a permutation's cycle through `index` returns to it (< n).
  std::uint64_t value = feistel(index);
  while (value >= n_) value = feistel(value);
  return value;
}

}  // namespace flashdir::sim::detail
