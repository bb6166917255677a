#include "mini_cache.h"

#include <algorithm>
#include <fmt/format.h>

namespace flashdir::testing {

using cache::SlotIndex;
using cache::SlotWrite;

const char* point_name(Point point) {
  switch (point) {
    case Point::after_metadata_write: return "after the metadata write";
    case Point::after_data_write: return "after the data write";
    case Point::before_confirmation: return "before the confirmation";
    case Point::window_flush: return "inside the forced window flush";
  }
  return "?";
}

MiniCache::MiniCache(StoreRig& rig, const MiniCacheOptions& options, std::uint64_t seed)
    : rig_(rig), options_(options), random_(seed), slots_(rig.layout().slot_count) {}

std::uint64_t MiniCache::chip_operations() { return rig_.faulty() != nullptr ? rig_.faulty()->operations() : 0; }

void MiniCache::mark(Point point) { points_.emplace_back(point, chip_operations()); }

std::uint64_t MiniCache::backing(const Key& key) {
  auto [it, inserted] = backing_.try_emplace(key, 0);
  if (inserted) it->second = next_version_++;  // the file's content before the cache saw it
  return it->second;
}

Status MiniCache::run(std::uint64_t ops) {
  for (std::uint64_t i = 0; i < ops; ++i) {
    const std::uint64_t file = 1 + random_.uniform(options_.files);
    // 80% of accesses go to the first fifth of each file.
    const std::uint64_t hot = options_.pages_per_file / 5;
    const std::uint32_t count = static_cast<std::uint32_t>(random_.between(1, options_.max_run_pages));
    std::uint64_t page = random_.uniform(100) < 80 ? random_.uniform(hot) : random_.uniform(options_.pages_per_file);
    page = std::min<std::uint64_t>(page, options_.pages_per_file - count);
    const std::uint64_t dice = random_.uniform(1000);
    Status s;
    if (dice < 5) {
      s = invalidate(file);
    } else if (dice < 10) {
      s = truncate(file, page);
    } else if (dice < 25) {
      s = fsync(file);
    } else if (dice < 35) {
      s = rig_.ftl().flush();
      if (s.is_ok()) rig_.store().on_durable(rig_.ftl().durable_seq());
    } else if (random_.uniform(100) < options_.read_percent) {
      s = read(file, page, count);
    } else {
      s = write(file, page, count, random_.uniform(100) < options_.write_back_percent);
    }
    if (!s.is_ok()) return s;
    in_flight_.clear();
    in_flight_write_through_ = false;
  }
  return Status::ok();
}

Result<SlotIndex> MiniCache::allocate() {
  // A clock hand over the slots, so that consecutive admissions get consecutive LPNs.
  const SlotIndex slot = hand_;
  hand_ = (hand_ + 1) % static_cast<SlotIndex>(slots_.size());
  Slot& s = slots_[slot];
  if (s.key) {
    const SlotIndex victim[] = {slot};
    if (s.dirty) {  // written back first
      backing_[*s.key] = s.version;
      FLASHDIR_TRY(rig_.store().mark_clean(victim));
      fsynced_.erase(*s.key);
      dirty_versions_.erase(*s.key);
      s.dirty = false;
    }
    FLASHDIR_TRY(rig_.store().drop(victim, Durability::buffered));
    index_.erase(*s.key);
    s.key.reset();
    --key_of_slot_count_;
  }
  return slot;
}

Status MiniCache::write_slots(const std::vector<SlotWrite>& writes, const std::vector<std::uint64_t>& versions) {
  // One FTL request per run of consecutive slots.
  for (std::size_t i = 0; i < writes.size();) {
    std::size_t n = 1;
    while (i + n < writes.size() && writes[i + n].slot == writes[i].slot + n) ++n;
    const std::span<const SlotWrite> run(writes.data() + i, n);
    const std::uint64_t forced_before = rig_.store().counters().window_forced;
    const std::uint64_t ops_before = chip_operations();
    FLASHDIR_TRY(rig_.store().before_data_write(run));
    if (rig_.store().counters().window_forced != forced_before) window_flushes_.emplace_back(ops_before, chip_operations());
    mark(Point::after_metadata_write);
    const Geometry& g = rig_.geometry();
    std::vector<std::uint8_t> data(n * g.page_size_bytes);
    std::vector<SlotIndex> slots(n);
    for (std::size_t k = 0; k < n; ++k) {
      slots[k] = run[k].slot;
      fill_page(rig_.layout().data_lpn(run[k].slot).value, versions[i + k],
                ByteSpan(data).subspan(k * g.page_size_bytes, g.page_size_bytes));
    }
    auto seq = rig_.ftl().write(rig_.layout().data_lpn(run[0].slot), static_cast<std::uint32_t>(n), data);
    if (!seq.is_ok()) return seq.status();
    mark(Point::after_data_write);
    FLASHDIR_TRY(rig_.store().after_data_write(slots, *seq));
    rig_.store().on_durable(rig_.ftl().durable_seq());
    mark(Point::before_confirmation);
    i += n;
  }
  return Status::ok();
}

Status MiniCache::admit(const std::vector<Key>& keys, const std::vector<std::uint64_t>& versions, bool dirty) {
  std::vector<SlotWrite> writes;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto slot = allocate();
    if (!slot.is_ok()) return slot.status();
    writes.push_back({*slot, {keys[i].first, keys[i].second, dirty}});
    Slot& s = slots_[*slot];
    s.key = keys[i];
    s.dirty = dirty;
    s.version = versions[i];
    if (dirty) dirty_versions_[keys[i]].push_back(versions[i]);
    index_[keys[i]] = *slot;
    ++key_of_slot_count_;
  }
  return write_slots(writes, versions);
}

Status MiniCache::overwrite(SlotIndex slot, std::uint64_t version, bool dirty) {
  Slot& s = slots_[slot];
  if (dirty) dirty_versions_[*s.key].push_back(version);
  s.dirty = dirty;
  s.version = version;
  return write_slots({SlotWrite{slot, {s.key->first, s.key->second, dirty}}}, {version});
}

Status MiniCache::read(std::uint64_t file, std::uint64_t first_page, std::uint32_t count) {
  std::vector<Key> missing;
  std::vector<std::uint64_t> versions;
  for (std::uint64_t p = first_page; p < first_page + count; ++p) {
    const Key key{file, p};
    if (index_.contains(key)) continue;  // a hit
    missing.push_back(key);
    versions.push_back(backing(key));
    in_flight_[key] = versions.back();
  }
  return admit(missing, versions, false);
}

Status MiniCache::write(std::uint64_t file, std::uint64_t first_page, std::uint32_t count, bool write_back) {
  std::vector<Key> missing;
  std::vector<std::uint64_t> versions;
  in_flight_write_through_ = !write_back;
  for (std::uint64_t p = first_page; p < first_page + count; ++p) {
    const Key key{file, p};
    backing(key);
    const std::uint64_t version = next_version_++;
    in_flight_[key] = version;
    auto it = index_.find(key);
    if (it != index_.end()) {
      // A dirty page stays dirty whatever the mode (its fsync'd version must not be dropped
      // for a write that has not reached the backing file). Write-through: the entry is set
      // (WRITING) before the backing file changes, so a cut in between cannot leave the old
      // bytes looking valid (doc/cache.md).
      const bool dirty = write_back || slots_[it->second].dirty;
      FLASHDIR_TRY(overwrite(it->second, version, dirty));
      if (!dirty) backing_[key] = version;
      continue;
    }
    missing.push_back(key);
    versions.push_back(version);
  }
  // Admission sets the entries before the backing file changes (as for an overwrite above).
  FLASHDIR_TRY(admit(missing, versions, write_back));
  if (!write_back) {
    for (std::size_t i = 0; i < missing.size(); ++i) backing_[missing[i]] = versions[i];
  }
  return Status::ok();
}

Status MiniCache::fsync(std::uint64_t file) {
  std::vector<SlotIndex> dirty;
  for (const auto& [key, slot] : index_) {
    if (key.first == file && slots_[slot].dirty) dirty.push_back(slot);
  }
  FLASHDIR_TRY(rig_.store().sync_slots(dirty));
  for (SlotIndex slot : dirty) {
    fsynced_[*slots_[slot].key] = slots_[slot].version;
    dirty_versions_[*slots_[slot].key] = {slots_[slot].version};
  }
  return Status::ok();
}

Status MiniCache::invalidate(std::uint64_t file) {
  // The backing file changed behind the cache: its slots go, durably, before the new content
  // counts. Dirty pages of the file are lost to the external writer, as with NFS.
  std::vector<SlotIndex> slots;
  for (const auto& [key, slot] : index_) {
    if (key.first == file) slots.push_back(slot);
  }
  // From here on the file's dirty pages are the external writer's loss, cut or not.
  for (SlotIndex slot : slots) fsynced_.erase(*slots_[slot].key);
  FLASHDIR_TRY(rig_.store().invalidate_file(file, slots));
  for (SlotIndex slot : slots) {
    index_.erase(*slots_[slot].key);
    fsynced_.erase(*slots_[slot].key);
    dirty_versions_.erase(*slots_[slot].key);
    slots_[slot] = Slot{};
    --key_of_slot_count_;
  }
  for (auto& [key, version] : backing_) {
    if (key.first == file) version = next_version_++;
  }
  return Status::ok();
}

Status MiniCache::truncate(std::uint64_t file, std::uint64_t from_page) {
  // As the engine does: the file's dirty pages go back (data on the chip, then clean), the
  // pages from the new end on are dropped durably, and only then is the backing file cut.
  std::vector<SlotIndex> dirty, cut;
  for (const auto& [key, slot] : index_) {
    if (key.first != file) continue;
    if (slots_[slot].dirty) dirty.push_back(slot);
    if (key.second >= from_page) cut.push_back(slot);
  }
  for (SlotIndex slot : dirty) backing_[*slots_[slot].key] = slots_[slot].version;
  FLASHDIR_TRY(rig_.store().sync_slots(dirty));
  FLASHDIR_TRY(rig_.store().mark_clean(dirty));
  for (SlotIndex slot : dirty) {
    slots_[slot].dirty = false;
    fsynced_.erase(*slots_[slot].key);
    dirty_versions_.erase(*slots_[slot].key);
  }
  FLASHDIR_TRY(rig_.store().drop(cut, Durability::forced));
  for (SlotIndex slot : cut) {
    index_.erase(*slots_[slot].key);
    slots_[slot] = Slot{};
    --key_of_slot_count_;
  }
  // The cut pages read as zeros now: a version no slot holds.
  for (auto& [key, version] : backing_) {
    if (key.first == file && key.second >= from_page) version = next_version_++;
  }
  return Status::ok();
}

std::vector<std::string> MiniCache::recover(const cache::RecoveredSlots& recovered) {
  std::vector<std::string> violations;
  std::map<Key, SlotIndex> found;
  std::vector<Slot> slots(slots_.size());
  for (const auto& r : recovered.usable) {
    const Key key{r.entry.file_id, r.entry.page_no};
    if (!found.emplace(key, r.slot).second) {
      violations.push_back(fmt::format("file {} page {} usable in two slots", key.first, key.second));
    }
    const auto version = rig_.data_version(r.slot);
    if (!version) {
      violations.push_back(fmt::format("slot {} is usable but its data does not read", r.slot));
      continue;
    }
    // What the slot may hold: the backing version; if dirty also any dirty version since the
    // last fsync (a write not fsync'd may be lost); the version of the operation in flight (a
    // write-through's reaches both).
    std::vector<std::uint64_t> allowed{backing(key)};
    auto in_flight = in_flight_.find(key);
    if (in_flight != in_flight_.end() && (r.entry.dirty || in_flight_write_through_)) allowed.push_back(in_flight->second);
    if (auto dirty = dirty_versions_.find(key); r.entry.dirty && dirty != dirty_versions_.end()) {
      allowed.insert(allowed.end(), dirty->second.begin(), dirty->second.end());
    }
    if (std::find(allowed.begin(), allowed.end(), *version) == allowed.end()) {
      std::string list;
      for (std::uint64_t v : allowed) list += (list.empty() ? "" : ",") + std::to_string(v);
      violations.push_back(fmt::format("slot {} ({} file {} page {}) holds version {}, allowed {}", r.slot,
                                       r.entry.dirty ? "dirty" : "clean", key.first, key.second, *version, list));
    }
    slots[r.slot] = Slot{key, r.entry.dirty, *version};
  }
  for (const auto& [key, version] : fsynced_) {
    auto it = found.find(key);
    // Kept in the cache, or already written back (a cut inside an eviction's write-back).
    const bool kept = (it != found.end() && slots[it->second].dirty && slots[it->second].version >= version) ||
                      backing(key) >= version;
    if (!kept) {
      violations.push_back(fmt::format("file {} page {}: fsync'd dirty version {} is lost ({})", key.first, key.second, version,
                                       it == found.end() ? std::string("not usable")
                                                         : fmt::format("slot {} {} version {}", it->second,
                                                                       slots[it->second].dirty ? "dirty" : "clean",
                                                                       slots[it->second].version)));
    }
  }
  // Adopt: dirty slots are written back (the backing file takes their version).
  slots_ = std::move(slots);
  index_.clear();
  fsynced_.clear();
  in_flight_.clear();
  dirty_versions_.clear();
  key_of_slot_count_ = 0;
  std::vector<SlotIndex> dirty;
  for (SlotIndex slot = 0; slot < slots_.size(); ++slot) {
    Slot& s = slots_[slot];
    if (!s.key) continue;
    index_[*s.key] = slot;
    ++key_of_slot_count_;
    if (s.dirty) {
      backing_[*s.key] = s.version;
      s.dirty = false;
      dirty.push_back(slot);
    }
  }
  if (Status st = rig_.store().mark_clean(dirty); !st.is_ok()) violations.push_back("write-back: " + st.to_string());
  return violations;
}

}  // namespace flashdir::testing
