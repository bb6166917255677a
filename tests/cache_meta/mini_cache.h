// A minimal cache over the metadata store, for crash tests and figures: what the engine does
// with slots (admission on read miss and write, eviction by a clock hand with write-back of
// dirty victims, in-place overwrites, fsync, truncation, invalidation of a changed file), without files or
// threads, and beside it a reference model of what any recovered slot may hold.
//
// Data versions: every write of a file page makes a new global version; a slot's bytes name
// the version they hold (ftl_harness.h), so a read after recovery tells which one it got.
//
// The model, per file page K: backing[K] (the backing file's version), the cached version if
// dirty, fsynced[K] (a dirty version fsync made durable, until written back), and the versions
// of the operation in flight at the cut (may or may not have landed).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store_rig.h"

namespace flashdir::testing {

struct MiniCacheOptions {
  std::uint32_t files = 6;
  std::uint32_t pages_per_file = 200;
  std::uint32_t read_percent = 90;   // the rest are writes
  std::uint32_t write_back_percent = 50;  // of writes; the rest write-through
  std::uint32_t max_run_pages = 4;
};

// Protocol points a test can aim a cut at (named by what has just happened).
enum class Point : std::uint8_t { after_metadata_write, after_data_write, before_confirmation, window_flush };
inline constexpr Point kPoints[] = {Point::after_metadata_write, Point::after_data_write, Point::before_confirmation,
                                    Point::window_flush};
const char* point_name(Point point);

class MiniCache {
 public:
  MiniCache(StoreRig& rig, const MiniCacheOptions& options, std::uint64_t seed);

  // Runs `ops` random operations; stops early, returning the status, when a call fails (the
  // power cut). Records the chip operation index at each protocol point passed.
  Status run(std::uint64_t ops);
  // After the rig's power cycle: checks the recovered slots against the model, then adopts them
  // (writes dirty ones back, as the engine's mount does). Returns the violations found.
  std::vector<std::string> recover(const cache::RecoveredSlots& recovered);

  std::uint64_t cached_slots() const { return key_of_slot_count_; }
  // (point, chip operation index just after it), in order.
  const std::vector<std::pair<Point, std::uint64_t>>& points() const { return points_; }
  // Chip operation ranges [first, end) spent inside forced window flushes.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& window_flushes() const { return window_flushes_; }

 private:
  using Key = std::pair<std::uint64_t, std::uint64_t>;  // (file id, page number)
  struct Slot {
    std::optional<Key> key;
    bool dirty = false;
    std::uint64_t version = 0;
  };
  Status read(std::uint64_t file, std::uint64_t first_page, std::uint32_t count);
  Status write(std::uint64_t file, std::uint64_t first_page, std::uint32_t count, bool write_back);
  Status fsync(std::uint64_t file);
  Status invalidate(std::uint64_t file);
  // The file is cut to `from_page` pages (dirty pages written back first).
  Status truncate(std::uint64_t file, std::uint64_t from_page);
  // Fills `keys` into newly allocated slots (one run when the hand gives consecutive slots).
  Status admit(const std::vector<Key>& keys, const std::vector<std::uint64_t>& versions, bool dirty);
  Status overwrite(cache::SlotIndex slot, std::uint64_t version, bool dirty);
  Result<cache::SlotIndex> allocate();
  Status write_slots(const std::vector<cache::SlotWrite>& writes, const std::vector<std::uint64_t>& versions);
  void mark(Point point);
  std::uint64_t backing(const Key& key);
  std::uint64_t chip_operations();

  StoreRig& rig_;
  MiniCacheOptions options_;
  SeededRandom random_;
  std::vector<Slot> slots_;
  std::map<Key, cache::SlotIndex> index_;
  std::map<Key, std::uint64_t> backing_;
  std::map<Key, std::uint64_t> fsynced_;
  std::map<Key, std::uint64_t> in_flight_;  // versions the current operation is writing
  std::map<Key, std::vector<std::uint64_t>> dirty_versions_;  // cached dirty versions since the last fsync
  bool in_flight_write_through_ = false;
  std::uint64_t next_version_ = 1;
  std::uint32_t hand_ = 0;
  std::uint64_t key_of_slot_count_ = 0;
  std::vector<std::pair<Point, std::uint64_t>> points_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> window_flushes_;
};

}  // namespace flashdir::testing
