#include "fs/file_data.h"

#include <unistd.h>

namespace flashdir::fs {

SysResult<bool> OpenFile::flush() {
  const int duplicate = ::dup(backing_fd());
  if (duplicate < 0) return last_errno();
  if (::close(duplicate) != 0) return last_errno();
  return true;
}

}  // namespace flashdir::fs
