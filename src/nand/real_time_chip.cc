#include "flashdir/nand/real_time_chip.h"

#include <chrono>
#include <thread>

namespace flashdir {

template <typename Operation>
Status RealTimeChip::paced(Operation operation) {
  const std::uint64_t start_ns = clock_.now_ns();
  Status status = operation();
  std::this_thread::sleep_for(std::chrono::nanoseconds(clock_.now_ns() - start_ns));
  return status;
}

Status RealTimeChip::read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) {
  return paced([&] { return inner_.read(first, count, data, oob); });
}

Status RealTimeChip::program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) {
  return paced([&] { return inner_.program(first, count, data, oob); });
}

Status RealTimeChip::erase(BlockNumber block) {
  return paced([&] { return inner_.erase(block); });
}

}  // namespace flashdir
