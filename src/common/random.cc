#include "flashdir/random.h"

#include <cassert>

namespace flashdir {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__extension__ typedef unsigned __int128 Uint128;  // GCC and Clang; no portable spelling

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

SeededRandom::SeededRandom(std::uint64_t seed) {
  for (auto& word : state_) word = splitmix64(seed);
}

std::uint64_t SeededRandom::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

std::uint64_t SeededRandom::uniform(std::uint64_t bound) {
  assert(bound != 0);
  Uint128 product = static_cast<Uint128>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = -bound % bound;
    while (low < threshold) {
      product = static_cast<Uint128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

std::uint64_t SeededRandom::between(std::uint64_t low, std::uint64_t high) {
  assert(low <= high);
  if (high - low == UINT64_MAX) return next_u64();
  return low + uniform(high - low + 1);
}

bool SeededRandom::one_in(std::uint64_t n) { return n != 0 && uniform(n) == 0; }

double SeededRandom::unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

}  // namespace flashdir
