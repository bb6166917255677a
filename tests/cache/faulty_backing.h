// A backing store double for the engine's tests: it passes every call to a real store, counts
// the calls a network store would make round trips for and, when told, fails writes with a
// chosen errno or makes reads and writes slow.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "flashdir/cache/backing_store.h"

namespace flashdir::testing {

// What the files of a FaultyBackingStore do; shared with the test, changed at any time.
struct BackingFaults {
  std::atomic<int> write_errno{0};  // nonzero: every write fails with it (an io_error status)
  std::atomic<std::chrono::microseconds::rep> read_latency_us{0}, write_latency_us{0};
  // Calls made so far through the store's files (opens: through the store).
  std::atomic<std::uint64_t> opens{0}, reads{0}, writes{0}, syncs{0}, stats{0};
};

std::unique_ptr<cache::BackingStore> make_faulty_backing_store(std::unique_ptr<cache::BackingStore> real,
                                                               std::shared_ptr<BackingFaults> faults);

}  // namespace flashdir::testing
