#include "fs/file_data.h"

#include <unistd.h>

namespace flashdir::fs {

SysResult<bool> OpenFile::flush() {
  auto fd = backing_fd();
  if (!fd.is_ok()) return Errno{fd.error()};
  const int duplicate = ::dup(*fd);
  if (duplicate < 0) return last_errno();
  if (::close(duplicate) != 0) return last_errno();
  return true;
}

}  // namespace flashdir::fs
