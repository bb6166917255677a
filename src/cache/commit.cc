// Commits (doc/cache.md "Commit"): what the device RAM buffers goes to the chip and the metadata
// publishes the finished writes, now (Engine::commit) and every commit_interval_ms in the
// background. Without it a fill stays unusable after a power cut for as long as its data sits
// in the device RAM, which under a read-heavy load with a large device RAM is most of the
// recent fills (a kill -9 right after reading 256 MiB through a 512 MiB cache kept 77%).
#include <chrono>

#include "cache/engine_core.h"

namespace flashdir::cache {

Status EngineCore::commit() {
  std::lock_guard cache(cache_mutex_);
  FLASHDIR_TRY(check_alive());
  const MetadataCounters before = store_->counters();
  const bool buffered = ftl_.durable_seq() < last_data_seq_;
  if (buffered) {
    if (Status s = ftl_.flush(); !s.is_ok()) return fail(s);
  }
  if (Status s = store_->publish_window(); !s.is_ok()) return fail(s);
  if (buffered || store_->counters().metadata_writes != before.metadata_writes) ++counters_.commits;
  return Status::ok();
}

void EngineCore::run_committer() {
  const auto interval = std::chrono::milliseconds(options_.commit_interval_ms);
  std::unique_lock lock(committer_mutex_);
  while (!committer_wake_.wait_for(lock, interval, [&] { return committer_stopping_; })) {
    lock.unlock();
    // A failure stops the engine (every later call reports it); nothing else to do here.
    (void)commit();
    lock.lock();
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
