// The handles the daemon gives the kernel (open files, directory streams), kept here as well
// as in fuse_file_info::fh. The kernel releases every handle before a clean unmount, but when
// the daemon stops on a signal, or the mount is detached lazily while files are open, the
// handles still open never get their RELEASE: the daemon frees them at shutdown, before the
// data path closes (an engine handle hands its file back at its release).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace flashdir::fs {

template <typename T>
class OpenHandles {
 public:
  // Keeps `handle`; returns the value for fi->fh.
  std::uint64_t add(std::unique_ptr<T> handle) {
    T* raw = handle.get();
    std::lock_guard lock(mutex_);
    handles_.emplace(raw, std::move(handle));
    return reinterpret_cast<std::uint64_t>(raw);
  }
  // The handle `fh` names (valid from add() until take()).
  static T& of(std::uint64_t fh) { return *reinterpret_cast<T*>(fh); }
  // Gives up the handle `fh` names (its RELEASE, or a reply that did not reach the kernel).
  std::unique_ptr<T> take(std::uint64_t fh) {
    std::lock_guard lock(mutex_);
    auto node = handles_.extract(reinterpret_cast<T*>(fh));
    return node.empty() ? nullptr : std::move(node.mapped());
  }
  // Frees every handle left and returns how many there were (at shutdown, no request runs).
  std::size_t clear() {
    std::lock_guard lock(mutex_);
    const std::size_t left = handles_.size();
    handles_.clear();
    return left;
  }

 private:
  std::mutex mutex_;
  absl::flat_hash_map<T*, std::unique_ptr<T>> handles_;
};

}  // namespace flashdir::fs
