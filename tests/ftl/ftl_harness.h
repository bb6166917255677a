// An FTL on a simulated chip for tests, with deterministic page contents: the content of
// (LPN, version) is computable, so an oracle needs only remember versions.
#pragma once

#include <memory>
#include <vector>

#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/faulty_chip.h"
#include "support/test_chip.h"

namespace flashdir::testing {

// Small enough for heavy GC in a test: 512-byte pages, 16 pages per block.
inline Geometry small_ftl_geometry(std::uint64_t blocks = 64) { return Geometry{512, 64, 16, blocks}; }

// Bytes of page `lpn` as written by write number `version`; never all zeros (zeros mean unmapped).
void fill_page(std::uint64_t lpn, std::uint64_t version, ByteSpan out);
// The whole buffer of a run of `count` pages written with `version`.
std::vector<std::uint8_t> run_data(const Geometry& g, std::uint64_t first, std::uint32_t count, std::uint64_t version);
// The version a page holds, recognised from its bytes; 0 for all zeros; UINT64_MAX if neither.
std::uint64_t version_of(std::uint64_t lpn, ConstByteSpan page);

// Options with a device RAM so small that it evicts all the time (four 512-byte pages).
FtlOptions small_cache_options(format::MappingScheme mapping, format::GcPolicy gc,
                               format::RamPolicy ram = format::RamPolicy::tree);
inline constexpr format::RamPolicy kRamPolicies[] = {format::RamPolicy::tree, format::RamPolicy::stack,
                                                     format::RamPolicy::aps, format::RamPolicy::static_split};

}  // namespace flashdir::testing

namespace flashdir::testing {
inline const Status& status_of(const Status& s) { return s; }
template <typename T>
const Status& status_of(const Result<T>& r) { return r.status(); }
}  // namespace flashdir::testing

// REQUIRE that a Status or Result is ok, printing its error otherwise.
#define REQUIRE_OK(expr)                                                        \
  do {                                                                          \
    const auto& require_ok_result_ = (expr);                                    \
    INFO("status: " << ::flashdir::testing::status_of(require_ok_result_).to_string()); \
    REQUIRE(::flashdir::testing::status_of(require_ok_result_).is_ok());        \
  } while (0)
