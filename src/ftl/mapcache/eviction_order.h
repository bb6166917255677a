// The eviction order of a cache whose entries live in slots (small integers) owned by the
// cache: LRU, or LFU with dynamic aging and ties broken by least recent use. Internal to
// src/ftl/mapcache.
//
// Every operation is O(1), using the LFU scheme of Shah, Mitra and Matani ("An O(1)
// algorithm for implementing the LFU cache eviction scheme", 2010): entries of equal
// frequency form one recency list (a bucket), and the non-empty buckets form a list in
// increasing frequency. An access moves an entry to the tail of the bucket of its frequency
// plus one, so every bucket stays in least-recently-used-first order, and the victim is the
// head of the first bucket. LRU is the same structure with a single bucket whose frequency
// never changes.
//
// Dynamic aging (LFU-DA, Arlitt et al., "Evaluating content management techniques for Web
// proxy caches", 2000): the order keeps an age, the frequency of the last entry evicted from
// the first bucket, and a new entry starts at the age plus one instead of at 1. Plain LFU
// starts every newcomer below all entries that ever collected accesses, so a full cache
// evicts each newcomer before it can earn a second access, and entries whose accesses
// stopped (the pages of a past sequential write, say) stay forever. With the age, those sink
// to the front as the age rises past them. Every frequency is at least the age, so the
// newcomers' bucket is the first bucket or the one after it: still O(1). Unlike Arlitt's
// LFU-DA an access adds one and does not lift the entry to the current age, which would
// skip an unbounded number of buckets.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "entry_cache.h"

namespace flashdir::ftl {

class EvictionOrder {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  explicit EvictionOrder(EntryEviction policy) : lfu_(policy == EntryEviction::lfu) {}

  // A new entry, accessed now for the first time: frequency age plus one.
  void insert_accessed(std::uint32_t slot);
  // A new entry split from `neighbour` that keeps its frequency and recency; it is evicted
  // right after `neighbour`.
  void insert_beside(std::uint32_t slot, std::uint32_t neighbour);
  // Counts an access to a linked entry.
  void touch(std::uint32_t slot);
  // Makes a linked entry the most recently used of its frequency without counting an access.
  void refresh(std::uint32_t slot);
  // Unlinks an evicted entry; evicting one of the least frequent (the victim, normally) raises
  // the age to its frequency.
  void evict(std::uint32_t slot);
  // Unlinks an entry that leaves for another reason (merged into another, say): the age stays.
  void erase(std::uint32_t slot);

  // The entry to evict next; kNone when empty.
  std::uint32_t front() const;

 private:
  struct Link {
    std::uint32_t prev = kNone;
    std::uint32_t next = kNone;
    std::uint32_t bucket = kNone;  // kNone: the slot is not linked
  };
  struct Bucket {
    std::uint64_t frequency = 0;
    std::uint32_t head = kNone;  // least recently used
    std::uint32_t tail = kNone;
    std::uint32_t prev = kNone;  // neighbouring buckets, in increasing frequency
    std::uint32_t next = kNone;
  };

  std::uint64_t next_frequency(std::uint64_t frequency) const {
    return lfu_ ? frequency + 1 : frequency;
  }
  std::uint32_t new_bucket(std::uint64_t frequency, std::uint32_t prev, std::uint32_t next);
  void free_bucket(std::uint32_t bucket);
  std::uint32_t bucket_after(std::uint32_t bucket, std::uint64_t frequency);
  std::uint32_t newcomers_bucket();
  Link& prepare_slot(std::uint32_t slot);
  void link_tail(std::uint32_t slot, std::uint32_t bucket);
  void unlink(std::uint32_t slot);

  bool lfu_;
  std::vector<Link> links_;  // indexed by slot
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_buckets_;
  std::uint32_t first_bucket_ = kNone;
  std::uint64_t age_ = 0;  // no entry's frequency is below it; always 0 under LRU
};

}  // namespace flashdir::ftl
