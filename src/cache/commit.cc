// Commits (doc/cache.md "Commit"): the writes not yet finished have their data programmed out of
// the device RAM and the metadata publishes them, now (Engine::commit), once the oldest of them
// is commit_interval_ms old (the committer thread), and as soon as they hold
// commit_pending_bytes (the write that gets there). Without it a fill stays unusable after a
// power cut for as long as its data sits in the device RAM, which under a read-heavy load with a
// large device RAM is most of the recent fills (reading 200 MiB through a 256 MiB cache with a
// 64 MiB device RAM and a kill -9 right after kept 71.3% with the 5 s commit of before, and no
// fill younger than 5 s; now every page cached 1.2 s before it, bench/restart).
#include <chrono>

#include "cache/engine_core.h"

namespace flashdir::cache {

Status EngineCore::commit() {
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  return commit_locked();
}

Status EngineCore::commit_locked() {
  const MetadataCounters before = store_->counters();
  // Only a flush writes the FTL's checkpoint, which bounds what the roll-forward of a restart
  // after a cut reads; the commit itself needs none of what else a flush does.
  const bool checkpoint = ftl_.checkpoint_due();
  if (checkpoint) {
    if (Status s = ftl_.flush(); !s.is_ok()) return fail(s);
  }
  if (Status s = store_->commit(); !s.is_ok()) return fail(s);
  uncommitted_since_ = 0;
  const MetadataCounters after = store_->counters();
  if (checkpoint || after.committed_writes != before.committed_writes || after.metadata_writes != before.metadata_writes)
    ++counters_.commits;
  return Status::ok();
}

void EngineCore::run_committer() {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::milliseconds(options_.commit_interval_ms);
  std::unique_lock lock(committer_mutex_);
  for (;;) {
    const Clock::rep since = uncommitted_since_;
    const Clock::time_point now = Clock::now();
    const Clock::time_point due = Clock::time_point(Clock::duration(since)) + interval;
    if (since != 0 && now >= due) {
      lock.unlock();
      // A failure stops the engine (every later call reports it): nothing left to commit.
      if (!commit().is_ok()) return;
      lock.lock();
      continue;
    }
    // With nothing to commit, look again an interval from now: a write meanwhile is then at
    // most an interval old.
    if (committer_wake_.wait_until(lock, since != 0 ? due : now + interval, [&] { return committer_stopping_; }))
      return;
  }
}

void EngineCore::stop_committer() {
  {
    std::lock_guard lock(committer_mutex_);
    committer_stopping_ = true;
  }
  committer_wake_.notify_all();
  if (committer_.joinable()) committer_.join();
}

}  // namespace flashdir::cache
