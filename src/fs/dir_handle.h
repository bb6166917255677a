// One opendir(3) of a backing directory as the daemon serves it.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <mutex>

namespace flashdir::fs {

struct DirHandle {
  DIR* stream = nullptr;
  off_t offset = 0;  // where `stream` stands, in the d_off values handed to the kernel
  std::mutex mutex;  // the kernel may read one handle from two threads
  DirHandle() = default;
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  ~DirHandle() {
    if (stream != nullptr) ::closedir(stream);
  }
};

}  // namespace flashdir::fs
