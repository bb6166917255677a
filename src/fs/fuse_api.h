// The one include of libfuse's low-level API, with the API version flashdir is written for.
// Only src/fs includes this header.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>
