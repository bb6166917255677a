// A host driving an FTL for power-cut tests: page contents from fill_page (ftl_harness.h),
// every acknowledged write and trim told to an oracle, the durable watermark taken after every
// request, and every read checked against the oracle. The first request that fails with
// power_lost is told to the oracle as in flight; after it every call does nothing, so a
// scenario is written straight through and may be cut anywhere. Any other error fails the test.
#pragma once

#include <cstdint>

#include "flashdir/ftl/ftl.h"
#include "workload_driver.h"

namespace flashdir::testing {

class Host {
 public:
  // Borrows both. Versions continue from the FTL's durable watermark.
  Host(Ftl& ftl, Oracle& oracle);

  void write(std::uint64_t lpn, std::uint32_t count, WriteHint hint = WriteHint::none);
  void trim(std::uint64_t lpn, std::uint32_t count);
  void read(std::uint64_t lpn, std::uint32_t count);
  void flush();

  bool power_lost() const { return power_lost_; }
  // The durable watermark last seen: what the contract promises after a cut.
  std::uint64_t durable() const { return durable_; }
  // The version the last acknowledged write got.
  std::uint64_t last_version() const { return version_; }
  Ftl& ftl() { return ftl_; }

 private:
  // Whether the request went through; notes a power cut.
  bool acknowledged(const Status& status);

  Ftl& ftl_;
  Oracle& oracle_;
  Geometry geometry_;
  bool stores_data_;  // reads return host data (not on a metadata-only chip)
  std::uint64_t version_;
  std::uint64_t durable_;
  bool power_lost_ = false;
};

}  // namespace flashdir::testing
