// One statx of an open backing object, and its struct stat view: the daemon stats what it has
// open once and hands the result to whoever needs it (a stat is a round trip on a network store).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include "fs/sys_result.h"

namespace flashdir::fs {

// statx of the descriptor itself (AT_EMPTY_PATH, never following a link) for `mask`; `flags`
// adds AT_STATX_* sync flags.
SysResult<struct statx> statx_of(int fd, unsigned int mask, int flags = 0);

// The struct stat the kernel's attribute replies carry, from a statx of the basic fields.
struct stat stat_from_statx(const struct statx& stx);

}  // namespace flashdir::fs
