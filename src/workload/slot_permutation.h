// A seeded bijection of [0, n), computed per element in O(1) memory: it scatters Zipf ranks
// over the working set so that the hot slots are not simply the first ones (which would make
// popularity and address locality the same thing, flattering any FTL that exploits
// sequentiality). A shuffled table would need 8 bytes per slot; this is a balanced Feistel
// network over the smallest even power of two >= n, with cycle walking to stay below n
// (Black and Rogaway, "Ciphers with arbitrary finite domains", 2002).
#pragma once

#include <array>
#include <cstdint>

namespace flashdir::sim::detail {

class SlotPermutation {
 public:
  // n >= 1.
  SlotPermutation(std::uint64_t n, std::uint64_t seed);

  // The image of `index` (< n), also < n; distinct indexes have distinct images.
  std::uint64_t operator()(std::uint64_t index) const;

 private:
  std::uint64_t feistel(std::uint64_t value) const;

  static constexpr int kRounds = 4;  // four rounds make a strong pseudo-random permutation
  std::uint64_t n_;
  int half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::array<std::uint64_t, kRounds> keys_{};
};

}  // namespace flashdir::sim::detail
