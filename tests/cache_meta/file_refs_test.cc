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

TEST_CASE("FileRefs asked again for the file it last numbered counts the holder, and forgets it once freed") {
  FileRefs refs;
  const std::uint32_t a = refs.acquire(5);
  CHECK(refs.acquire(5) == a);  // the remembered number
  refs.release(a);
  refs.release(a);  // freed: the memory of it must go too
  CHECK(refs.size() == 0);
  const std::uint32_t b = refs.acquire(6);  // reuses a's number for another file
  CHECK(b == a);
  CHECK(refs.file_id(b) == 6);
  const std::uint32_t c = refs.acquire(5);  // 5 is not b's file any more
  CHECK(c != b);
  CHECK(refs.file_id(c) == 5);
  CHECK(refs.size() == 2);
}
