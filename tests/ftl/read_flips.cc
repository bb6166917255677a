#include "read_flips.h"

namespace flashdir::testing {

Status ReadFlips::read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) {
  FLASHDIR_TRY(inner_.read(first, count, data, oob));
  const std::size_t page_bytes = geometry().page_size_bytes;
  for (std::uint32_t i = 0; i < count && !data.empty(); ++i) {
    const bool aimed = aimed_ && *aimed_ == first + i;
    if (!aimed && (one_in_ == 0 || !random_.one_in(one_in_))) continue;
    if (aimed) aimed_.reset();
    const std::uint64_t bit = random_.uniform(page_bytes * 8);
    data[i * page_bytes + bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    ++flips_;
  }
  return Status::ok();
}

}  // namespace flashdir::testing
