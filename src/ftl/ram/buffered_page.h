// A host page held in the device RAM's write buffer: not on flash yet, so not durable.
#pragma once

#include <cstdint>
#include <vector>

#include "flashdir/ftl/options.h"
#include "flashdir/types.h"

namespace flashdir::ram {

struct BufferedPage {
  Lpn lpn;
  std::uint64_t version = 0;        // the sequence number of the write that buffered it
  // The oldest write this page stands for: a write replacing a buffered page absorbs it, and
  // until the page reaches flash none of those writes is durable.
  std::uint64_t pending_since = 0;
  std::vector<std::uint8_t> data;   // page_size bytes; empty when the chip keeps no host data
  WriteHint hint = WriteHint::none;
};

}  // namespace flashdir::ram
