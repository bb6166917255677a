// Vocabulary types shared by every layer. Page and block numbers of different spaces get
// distinct types so that an Lpn never compiles where a Ppn is expected.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <span>

namespace flashdir {

template <typename Tag>
struct StrongNumber {
  std::uint64_t value = 0;

  constexpr StrongNumber() = default;
  constexpr explicit StrongNumber(std::uint64_t v) : value(v) {}
  constexpr auto operator<=>(const StrongNumber&) const = default;
  constexpr StrongNumber operator+(std::uint64_t n) const { return StrongNumber(value + n); }
};

struct PpnTag;
struct LpnTag;
struct BlockTag;

using Ppn = StrongNumber<PpnTag>;            // physical page number on the chip
using Lpn = StrongNumber<LpnTag>;            // logical page number exported by the FTL
using BlockNumber = StrongNumber<BlockTag>;  // physical erase block on the chip

using ByteSpan = std::span<std::uint8_t>;
using ConstByteSpan = std::span<const std::uint8_t>;

}  // namespace flashdir

template <typename Tag>
struct std::hash<flashdir::StrongNumber<Tag>> {
  std::size_t operator()(const flashdir::StrongNumber<Tag>& n) const noexcept {
    return std::hash<std::uint64_t>{}(n.value);
  }
};
