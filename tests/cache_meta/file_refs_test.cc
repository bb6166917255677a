// FileRefs: the small numbers slot entries hold for their files.
#include <catch2/catch.hpp>

#include "cache/meta/file_refs.h"

using flashdir::cache::meta::FileRefs;

TEST_CASE("FileRefs gives one number per file while it has holders, and reuses freed numbers") {
  FileRefs refs;
  const std::uint32_t a = refs.acquire(1ULL << 60);
  const std::uint32_t b = refs.acquire(7);
  CHECK(a != 0);
  CHECK(b != 0);
  CHECK(a != b);
  CHECK(refs.acquire(1ULL << 60) == a);  // a second holder
  CHECK(refs.file_id(a) == 1ULL << 60);
  CHECK(refs.file_id(b) == 7);
  refs.release(a);
  CHECK(refs.size() == 2);  // one holder left
  CHECK(refs.file_id(a) == 1ULL << 60);
  refs.release(a);
  CHECK(refs.size() == 1);
  const std::uint32_t c = refs.acquire(9);
  CHECK(c == a);  // the freed number, reused
  CHECK(refs.file_id(c) == 9);
  CHECK(refs.file_id(b) == 7);
}
