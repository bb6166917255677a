// APS's ghost mapping cache (papers/aps-adaptive-partitioning.txt IV-A): LPNs recently evicted
// from the mapping cache, kept as bits of a hash bitmap. It represents `size()` entries, at
// most `capacity()` (the mapping space the policy does not have). Collisions make the number of
// set bits lag behind the entries represented, so shrinking is conditional (the paper's alpha):
// when set_bits * alpha is already below the new size, only the size shrinks and no bit is
// cleared; otherwise random set bits are cleared until no more remain than the new size.
#pragma once

#include <cstdint>
#include <vector>

#include "flashdir/random.h"
#include "flashdir/types.h"

namespace flashdir::ram {

class GhostBitmap {
 public:
  static constexpr std::uint64_t kAlpha = 3;

  // `bits` is rounded up to a power of two (at least 64).
  GhostBitmap(std::uint64_t bits, std::uint64_t seed);

  void set_capacity(std::uint64_t entries);
  void insert(Lpn lpn);
  bool contains(Lpn lpn) const;

  std::uint64_t size() const { return size_; }
  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t set_bits() const { return set_bits_; }
  std::uint64_t bytes() const { return words_.size() * 8; }

 private:
  std::uint64_t bit_of(Lpn lpn) const;
  void shrink_to(std::uint64_t entries);
  void clear_random_bit();

  std::vector<std::uint64_t> words_;
  std::uint64_t mask_ = 0;
  std::uint64_t set_bits_ = 0;
  std::uint64_t size_ = 0;
  std::uint64_t capacity_ = 0;
  SeededRandom random_;
};

}  // namespace flashdir::ram
