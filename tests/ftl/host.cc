#include "host.h"

#include <catch2/catch.hpp>

#include "ftl/ftl_core.h"
#include "ftl_harness.h"

namespace flashdir::testing {

Host::Host(Ftl& ftl, Oracle& oracle)
    : ftl_(ftl),
      oracle_(oracle),
      geometry_(ftl.core().layout().geometry),
      stores_data_(ftl.core().chip().stores_data()),
      version_(ftl.durable_seq()),
      durable_(ftl.durable_seq()) {}

bool Host::acknowledged(const Status& status) {
  if (status.is_ok()) {
    durable_ = ftl_.durable_seq();
    return true;
  }
  INFO(status.to_string());
  REQUIRE(status.code() == StatusCode::power_lost);
  power_lost_ = true;
  return false;
}

void Host::write(std::uint64_t lpn, std::uint32_t count, WriteHint hint) {
  if (power_lost_) return;
  auto written = ftl_.write(Lpn(lpn), count, run_data(geometry_, lpn, count, version_ + 1), hint);
  if (!acknowledged(written.status())) {
    oracle_.in_flight_write(lpn, count, version_ + 1);
    return;
  }
  REQUIRE(*written == version_ + 1);
  version_ = *written;
  oracle_.wrote(lpn, count, version_);
}

void Host::trim(std::uint64_t lpn, std::uint32_t count) {
  if (power_lost_) return;
  if (acknowledged(ftl_.trim(Lpn(lpn), count))) {
    oracle_.trimmed(lpn, count);
  } else {
    oracle_.in_flight_trim(lpn, count);
  }
}

void Host::read(std::uint64_t lpn, std::uint32_t count) {
  if (power_lost_) return;
  std::vector<std::uint8_t> buffer(std::size_t{count} * geometry_.page_size_bytes);
  if (!acknowledged(ftl_.read(Lpn(lpn), count, buffer)) || !stores_data_) return;
  for (std::uint32_t i = 0; i < count; ++i) {
    const ConstByteSpan page =
        ConstByteSpan(buffer).subspan(std::size_t{i} * geometry_.page_size_bytes, geometry_.page_size_bytes);
    INFO("LPN " << lpn + i << ": " << oracle_.describe(lpn + i));
    REQUIRE(version_of(lpn + i, page) == oracle_.expected(lpn + i));
  }
}

void Host::flush() {
  if (power_lost_) return;
  if (acknowledged(ftl_.flush())) oracle_.flushed();
}

}  // namespace flashdir::testing
