// A scoped RLIMIT_FSIZE: while one is alive, this process may not make a file longer than the
// limit, and a write or truncate past it fails with EFBIG (SIGXFSZ, which would kill the test,
// is ignored meanwhile). The way to provoke a real backing-file error without root.
#pragma once

#include <sys/resource.h>

namespace flashdir::testing {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t limit_bytes);
  ~FileSizeLimit();
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_limit_{};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace flashdir::testing
