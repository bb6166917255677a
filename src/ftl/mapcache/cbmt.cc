// Layout: entries live in a slot pool (a vector with a free list); two hash maps index them by
// logical block and by physical block; an LRU EvictionOrder picks what a full table drops.
// Every operation is O(1) expected.
#include "cbmt.h"

#include <absl/container/flat_hash_map.h>

#include <cassert>
#include <vector>

#include "eviction_order.h"

namespace flashdir::ftl {
namespace {

struct Entry {
  std::uint64_t lbn = 0;
  BlockNumber block;
};

}  // namespace

struct Cbmt::State {
  explicit State(std::uint64_t capacity_entries)
      : capacity(capacity_entries), order(EntryEviction::lru) {}

  std::uint64_t capacity;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> slot_by_lbn;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> slot_by_block;
  std::vector<Entry> entries;  // indexed by slot
  std::vector<std::uint32_t> free_slots;
  EvictionOrder order;

  void add(std::uint64_t lbn, BlockNumber block) {
    std::uint32_t slot;
    if (free_slots.empty()) {
      assert(entries.size() < EvictionOrder::kNone && "slot numbers exhausted");
      slot = static_cast<std::uint32_t>(entries.size());
      entries.push_back(Entry{lbn, block});
    } else {
      slot = free_slots.back();
      free_slots.pop_back();
      entries[slot] = Entry{lbn, block};
    }
    slot_by_lbn.emplace(lbn, slot);
    slot_by_block.emplace(block.value, slot);
    order.insert_accessed(slot);
  }

  void drop(std::uint32_t slot) {
    const Entry& entry = entries[slot];
    slot_by_lbn.erase(entry.lbn);
    slot_by_block.erase(entry.block.value);
    order.erase(slot);
    free_slots.push_back(slot);
  }

  // A physical block holds one logical block at a time: registering `block` anew makes an
  // older registration of it stale, so that one goes.
  void drop_owner_of(BlockNumber block) {
    if (const auto it = slot_by_block.find(block.value); it != slot_by_block.end()) {
      drop(it->second);
    }
  }
};

Cbmt::Cbmt(std::uint64_t capacity_entries)
    : state_(std::make_unique<State>(capacity_entries)) {}

Cbmt::~Cbmt() = default;

std::optional<BlockNumber> Cbmt::lookup(std::uint64_t lbn) {
  const auto it = state_->slot_by_lbn.find(lbn);
  if (it == state_->slot_by_lbn.end()) return std::nullopt;
  state_->order.touch(it->second);
  return state_->entries[it->second].block;
}

bool Cbmt::contains(std::uint64_t lbn) const { return state_->slot_by_lbn.contains(lbn); }

void Cbmt::insert(std::uint64_t lbn, BlockNumber block) {
  State& s = *state_;
  if (s.capacity == 0) return;
  if (const auto it = s.slot_by_lbn.find(lbn); it != s.slot_by_lbn.end()) {
    const std::uint32_t slot = it->second;
    if (s.entries[slot].block != block) {
      s.drop_owner_of(block);
      s.slot_by_block.erase(s.entries[slot].block.value);
      s.entries[slot].block = block;
      s.slot_by_block.emplace(block.value, slot);
    }
    s.order.touch(slot);
    return;
  }
  s.drop_owner_of(block);
  if (s.slot_by_lbn.size() >= s.capacity) s.drop(s.order.front());
  s.add(lbn, block);
  assert(s.slot_by_lbn.size() <= s.capacity);
  assert(s.slot_by_lbn.size() == s.slot_by_block.size());
}

void Cbmt::erase(std::uint64_t lbn) {
  const auto it = state_->slot_by_lbn.find(lbn);
  if (it != state_->slot_by_lbn.end()) state_->drop(it->second);
}

std::optional<std::uint64_t> Cbmt::lbn_of(BlockNumber block) const {
  const auto it = state_->slot_by_block.find(block.value);
  if (it == state_->slot_by_block.end()) return std::nullopt;
  return state_->entries[it->second].lbn;
}

std::uint64_t Cbmt::size() const { return state_->slot_by_lbn.size(); }

std::uint64_t Cbmt::capacity() const { return state_->capacity; }

}  // namespace flashdir::ftl
