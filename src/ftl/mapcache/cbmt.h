// CFTL's cached block mapping table (papers/cftl.txt section 3.1): logical block number ->
// physical block for logical blocks laid out whole and in order in one physical block, so
// that lpn = lbn * pages_per_block + i lives at page i of that block. It is a cache: the
// translation pages always hold the same mapping page by page, so dropping an entry loses
// nothing. Bounded: inserting into a full table evicts the least recently used entry.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "flashdir/types.h"

namespace flashdir::ftl {

class Cbmt {
 public:
  explicit Cbmt(std::uint64_t capacity_entries);
  ~Cbmt();
  Cbmt(const Cbmt&) = delete;
  Cbmt& operator=(const Cbmt&) = delete;

  // The physical block of `lbn` if registered; a hit makes it most recently used.
  std::optional<BlockNumber> lookup(std::uint64_t lbn);
  bool contains(std::uint64_t lbn) const;
  // Registers (or re-registers) lbn -> block; evicts the LRU entry when full. A capacity of
  // zero keeps nothing.
  void insert(std::uint64_t lbn, BlockNumber block);
  void erase(std::uint64_t lbn);
  // The logical block registered to `block`, if any (GC asks before moving a block's pages).
  std::optional<std::uint64_t> lbn_of(BlockNumber block) const;

  std::uint64_t size() const;
  std::uint64_t capacity() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace flashdir::ftl
