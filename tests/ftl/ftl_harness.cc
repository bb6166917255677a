#include "ftl_harness.h"

#include <algorithm>
#include <cstring>

#include "flashdir/random.h"

namespace flashdir::testing {

void fill_page(std::uint64_t lpn, std::uint64_t version, ByteSpan out) {
  SeededRandom random(lpn * 0x9E3779B97F4A7C15ULL ^ version);
  for (std::size_t i = 0; i + 8 <= out.size(); i += 8) {
    const std::uint64_t word = random.next_u64();
    std::memcpy(out.data() + i, &word, 8);
  }
  // A readable header: LPN and version, so a wrong page names itself in a failure.
  std::memcpy(out.data(), &lpn, 8);
  std::memcpy(out.data() + 8, &version, 8);
}

std::vector<std::uint8_t> run_data(const Geometry& g, std::uint64_t first, std::uint32_t count, std::uint64_t version) {
  std::vector<std::uint8_t> data(std::size_t{count} * g.page_size_bytes);
  for (std::uint32_t i = 0; i < count; ++i) {
    fill_page(first + i, version, ByteSpan(data).subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes));
  }
  return data;
}

std::uint64_t version_of(std::uint64_t lpn, ConstByteSpan page) {
  if (std::all_of(page.begin(), page.end(), [](std::uint8_t b) { return b == 0; })) return 0;
  std::uint64_t stored_lpn = 0, version = 0;
  std::memcpy(&stored_lpn, page.data(), 8);
  std::memcpy(&version, page.data() + 8, 8);
  if (stored_lpn != lpn) return UINT64_MAX;
  std::vector<std::uint8_t> expected(page.size());
  fill_page(lpn, version, expected);
  return std::equal(expected.begin(), expected.end(), page.begin()) ? version : UINT64_MAX;
}

FtlOptions small_cache_options(format::MappingScheme mapping, format::GcPolicy gc, format::RamPolicy ram) {
  FtlOptions options;
  options.mapping = mapping;
  options.gc = gc;
  options.ram.policy = ram;
  options.ram.budget_bytes = 2048;
  options.ram.aps_interval_requests = 50;  // repartition often in short tests
  options.checkpoint_interval_pages = 200;
  return options;
}

}  // namespace flashdir::testing
