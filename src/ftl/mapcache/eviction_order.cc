#include "eviction_order.h"

#include <cassert>

namespace flashdir::ftl {

void EvictionOrder::insert_accessed(std::uint32_t slot) { link_tail(slot, newcomers_bucket()); }

void EvictionOrder::insert_beside(std::uint32_t slot, std::uint32_t neighbour) {
  const Link neighbour_link = links_[neighbour];
  assert(neighbour_link.bucket != kNone && "the neighbour is not linked");
  Link& link = prepare_slot(slot);  // may reallocate links_: neighbour was copied above
  link = Link{neighbour, neighbour_link.next, neighbour_link.bucket};
  links_[neighbour].next = slot;
  if (neighbour_link.next == kNone) {
    buckets_[neighbour_link.bucket].tail = slot;
  } else {
    links_[neighbour_link.next].prev = slot;
  }
}

void EvictionOrder::touch(std::uint32_t slot) {
  const std::uint32_t from = links_[slot].bucket;
  assert(from != kNone && "touching an entry that is not linked");
  // Find (or create) the destination before unlinking, while `from` still anchors its place
  // in the bucket list.
  const std::uint32_t to = bucket_after(from, next_frequency(buckets_[from].frequency));
  if (to == from && buckets_[from].tail == slot) return;  // LRU hit on the newest entry
  unlink(slot);
  if (from != to && buckets_[from].head == kNone) free_bucket(from);
  link_tail(slot, to);
}

void EvictionOrder::refresh(std::uint32_t slot) {
  const std::uint32_t bucket = links_[slot].bucket;
  assert(bucket != kNone && "refreshing an entry that is not linked");
  if (buckets_[bucket].tail == slot) return;
  unlink(slot);  // the bucket still holds the entry after `slot`, so it stays
  link_tail(slot, bucket);
}

void EvictionOrder::evict(std::uint32_t slot) {
  const std::uint32_t bucket = links_[slot].bucket;
  assert(bucket != kNone && "evicting an entry that is not linked");
  if (bucket == first_bucket_) age_ = buckets_[bucket].frequency;
  erase(slot);
}

void EvictionOrder::erase(std::uint32_t slot) {
  const std::uint32_t bucket = links_[slot].bucket;
  assert(bucket != kNone && "erasing an entry that is not linked");
  unlink(slot);
  if (buckets_[bucket].head == kNone) free_bucket(bucket);
}

std::uint32_t EvictionOrder::front() const {
  return first_bucket_ == kNone ? kNone : buckets_[first_bucket_].head;
}

std::uint32_t EvictionOrder::new_bucket(std::uint64_t frequency, std::uint32_t prev,
                                        std::uint32_t next) {
  std::uint32_t index;
  if (free_buckets_.empty()) {
    assert(buckets_.size() < kNone);
    index = static_cast<std::uint32_t>(buckets_.size());
    buckets_.emplace_back();
  } else {
    index = free_buckets_.back();
    free_buckets_.pop_back();
  }
  buckets_[index] = Bucket{frequency, kNone, kNone, prev, next};
  if (prev == kNone) {
    first_bucket_ = index;
  } else {
    buckets_[prev].next = index;
  }
  if (next != kNone) buckets_[next].prev = index;
  return index;
}

void EvictionOrder::free_bucket(std::uint32_t bucket) {
  const Bucket b = buckets_[bucket];
  assert(b.head == kNone && b.tail == kNone && "freeing a bucket that holds entries");
  if (b.prev == kNone) {
    first_bucket_ = b.next;
  } else {
    buckets_[b.prev].next = b.next;
  }
  if (b.next != kNone) buckets_[b.next].prev = b.prev;
  free_buckets_.push_back(bucket);
}

// The bucket of `frequency`, which is `bucket` itself or comes right after it.
std::uint32_t EvictionOrder::bucket_after(std::uint32_t bucket, std::uint64_t frequency) {
  if (buckets_[bucket].frequency == frequency) return bucket;
  assert(buckets_[bucket].frequency < frequency);
  const std::uint32_t next = buckets_[bucket].next;
  if (next != kNone && buckets_[next].frequency == frequency) return next;
  assert(next == kNone || buckets_[next].frequency > frequency);
  return new_bucket(frequency, bucket, next);
}

// The bucket of frequency age + 1 (LFU) or of every entry (LRU): the first bucket, or the one
// after it when the first holds entries at the age itself.
std::uint32_t EvictionOrder::newcomers_bucket() {
  const std::uint64_t frequency = next_frequency(age_);
  if (first_bucket_ == kNone || buckets_[first_bucket_].frequency > frequency) {
    return new_bucket(frequency, kNone, first_bucket_);
  }
  assert(buckets_[first_bucket_].frequency >= age_ && "an entry below the age");
  return bucket_after(first_bucket_, frequency);
}

EvictionOrder::Link& EvictionOrder::prepare_slot(std::uint32_t slot) {
  assert(slot != kNone);
  if (slot >= links_.size()) links_.resize(std::size_t{slot} + 1);
  assert(links_[slot].bucket == kNone && "the slot is already linked");
  return links_[slot];
}

void EvictionOrder::link_tail(std::uint32_t slot, std::uint32_t bucket) {
  Link& link = prepare_slot(slot);
  Bucket& b = buckets_[bucket];
  link = Link{b.tail, kNone, bucket};
  if (b.tail == kNone) {
    b.head = slot;
  } else {
    links_[b.tail].next = slot;
  }
  b.tail = slot;
}

// Takes `slot` out of its bucket's list; the caller frees the bucket if it became empty.
void EvictionOrder::unlink(std::uint32_t slot) {
  Link& link = links_[slot];
  Bucket& b = buckets_[link.bucket];
  if (link.prev == kNone) {
    b.head = link.next;
  } else {
    links_[link.prev].next = link.next;
  }
  if (link.next == kNone) {
    b.tail = link.prev;
  } else {
    links_[link.next].prev = link.prev;
  }
  link = Link{};
}

}  // namespace flashdir::ftl
