#include "fs/name_opener.h"

namespace flashdir::fs {

NameOpener::~NameOpener() {
  std::deque<Inode*> unopened;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    unopened.swap(queue_);
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  for (Inode* inode : unopened) inodes_.forget(*inode, 1);
}

void NameOpener::open_siblings_soon(Inode& inode) {
  std::vector<Inode*> siblings = inodes_.take_named_siblings(inode, kBatch);
  if (siblings.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      for (Inode* sibling : siblings) inodes_.forget(*sibling, 1);
      return;
    }
    queue_.insert(queue_.end(), siblings.begin(), siblings.end());
    while (threads_.size() < kThreads) threads_.emplace_back([this] { work(); });
  }
  queued_.fetch_add(siblings.size(), std::memory_order_relaxed);
  wake_.notify_all();
}

void NameOpener::work() {
  for (;;) {
    Inode* inode = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      inode = queue_.front();
      queue_.pop_front();
    }
    const bool opened = open_(*inode);
    (opened ? opened_ : failed_).fetch_add(1, std::memory_order_relaxed);
    inodes_.forget(*inode, 1);
  }
}

NameOpener::Counts NameOpener::counts() const {
  return Counts{queued_.load(std::memory_order_relaxed), opened_.load(std::memory_order_relaxed),
                failed_.load(std::memory_order_relaxed)};
}

}  // namespace flashdir::fs
