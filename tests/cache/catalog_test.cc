// The catalog's records and its two indexes (include/flashdir/catalog.h).
#include <catch2/catch.hpp>

#include "flashdir/catalog.h"
#include "support/temp_dir.h"

using flashdir::BackingAttributes;
using flashdir::BackingRootRecord;
using flashdir::Catalog;
using flashdir::CatalogFile;
using flashdir::IdentityRule;
using flashdir::StatusCode;
using flashdir::testing::TempDir;

namespace {

BackingAttributes inode(std::uint64_t number, std::int64_t ctime_ns = 1) {
  BackingAttributes attributes;
  attributes.inode = number;
  attributes.birth_ns = static_cast<std::int64_t>(number) * 10;
  attributes.uid = 1000;
  attributes.size_bytes = number * 100;
  attributes.ctime_ns = ctime_ns;
  return attributes;
}

std::unique_ptr<Catalog> create(const TempDir& dir) {
  auto catalog = Catalog::create(dir / "catalog");
  REQUIRE(catalog.is_ok());
  return std::move(catalog).value();
}

}  // namespace

TEST_CASE("catalog: a record is found by its path and by its inode, and its ids are never reused") {
  TempDir dir;
  auto catalog = create(dir);
  auto a = catalog->add_file("d/a", inode(7));
  REQUIRE(a.is_ok());
  CHECK(catalog->find_by_path("d/a").value() == *a);
  CHECK(catalog->find_by_inode(0, 7).value() == *a);
  CHECK(catalog->find_by_inode(1, 7).status().code() == StatusCode::not_found);
  REQUIRE(catalog->remove_file(a->file_id).is_ok());
  CHECK(catalog->find_by_path("d/a").status().code() == StatusCode::not_found);
  auto b = catalog->add_file("d/a", inode(7));
  REQUIRE(b.is_ok());
  CHECK(b->file_id > a->file_id);
}

TEST_CASE("catalog: a new file at a path takes the path; the old record keeps its id as a hint") {
  TempDir dir;
  auto catalog = create(dir);
  auto old_file = catalog->add_file("p", inode(1));
  auto new_file = catalog->add_file("p", inode(2));
  REQUIRE((old_file.is_ok() && new_file.is_ok()));
  CHECK(catalog->find_by_path("p")->file_id == new_file->file_id);
  CHECK(catalog->find_by_inode(0, 1)->file_id == old_file->file_id);
  CHECK(catalog->find_by_id(old_file->file_id)->relative_path == "p");
  // The old record met again at its own path does not take the name back unless it moved.
  REQUIRE(catalog->update(old_file->file_id, "p", inode(1, 5)).is_ok());
  CHECK(catalog->find_by_path("p")->file_id == new_file->file_id);
  REQUIRE(catalog->update(old_file->file_id, "q", inode(1, 5)).is_ok());
  CHECK(catalog->find_by_path("q")->file_id == old_file->file_id);
  CHECK(catalog->find_by_path("p")->file_id == new_file->file_id);
  // Removing the old record leaves the new one's entries alone.
  REQUIRE(catalog->remove_file(old_file->file_id).is_ok());
  CHECK(catalog->find_by_path("p")->file_id == new_file->file_id);
}

TEST_CASE("catalog: update moves the inode index with a renumbered file") {
  TempDir dir;
  auto catalog = create(dir);
  auto file = catalog->add_file("f", inode(3));
  REQUIRE(file.is_ok());
  BackingAttributes renumbered = inode(3);
  renumbered.inode = 9;
  REQUIRE(catalog->update(file->file_id, "f", renumbered).is_ok());
  CHECK(catalog->find_by_inode(0, 3).status().code() == StatusCode::not_found);
  CHECK(catalog->find_by_inode(0, 9)->file_id == file->file_id);
}

TEST_CASE("catalog: rename moves a file or a directory; a replaced file loses only its path") {
  TempDir dir;
  auto catalog = create(dir);
  auto moved = catalog->add_file("a/x", inode(1));
  auto under = catalog->add_file("a/sub/y", inode(2));
  auto beside = catalog->add_file("ab", inode(3));
  auto target = catalog->add_file("b", inode(4));
  REQUIRE((moved.is_ok() && under.is_ok() && beside.is_ok() && target.is_ok()));

  auto replaced = catalog->rename("ab", "b", false);
  REQUIRE(replaced.is_ok());
  REQUIRE(replaced->size() == 1);
  CHECK(replaced->front().file_id == target->file_id);
  CHECK(catalog->find_by_path("b")->file_id == beside->file_id);
  CHECK(catalog->find_by_inode(0, 4)->file_id == target->file_id);  // kept, by inode

  REQUIRE(catalog->rename("a", "c", false).is_ok());
  CHECK(catalog->find_by_path("c/x")->file_id == moved->file_id);
  CHECK(catalog->find_by_path("c/sub/y")->file_id == under->file_id);
  CHECK(catalog->find_by_path("a/x").status().code() == StatusCode::not_found);
  CHECK(catalog->find_by_path("b")->file_id == beside->file_id);  // "ab" was not under "a"
}

TEST_CASE("catalog: an exchange swaps the two paths") {
  TempDir dir;
  auto catalog = create(dir);
  auto one = catalog->add_file("one", inode(1));
  auto two = catalog->add_file("two", inode(2));
  REQUIRE((one.is_ok() && two.is_ok()));
  auto replaced = catalog->rename("one", "two", true);
  REQUIRE(replaced.is_ok());
  CHECK(replaced->empty());
  CHECK(catalog->find_by_path("two")->file_id == one->file_id);
  CHECK(catalog->find_by_path("one")->file_id == two->file_id);
  CHECK(catalog->find_by_id(one->file_id)->relative_path == "two");
}

TEST_CASE("catalog: unindex keeps the record but no index names it") {
  TempDir dir;
  auto catalog = create(dir);
  auto file = catalog->add_file("u", inode(5));
  REQUIRE(file.is_ok());
  REQUIRE(catalog->unindex(file->file_id).is_ok());
  CHECK(catalog->find_by_path("u").status().code() == StatusCode::not_found);
  CHECK(catalog->find_by_inode(0, 5).status().code() == StatusCode::not_found);
  CHECK(catalog->find_by_id(file->file_id).is_ok());
}

TEST_CASE("catalog: the backing root and the identity rule survive a reopen") {
  TempDir dir;
  BackingRootRecord root{"/srv/slow", 0xEF53, 42, 2, 99};
  {
    auto catalog = create(dir);
    REQUIRE(catalog->put_backing_root(root).is_ok());
    REQUIRE(catalog->put_identity_rule(IdentityRule::path).is_ok());
  }
  auto catalog = Catalog::open(dir / "catalog", Catalog::Access::read_only);
  REQUIRE(catalog.is_ok());
  CHECK((*catalog)->backing_root().value() == root);
  CHECK((*catalog)->identity_rule().value() == IdentityRule::path);
  BackingRootRecord other = root;
  other.root_inode = 3;
  CHECK_FALSE(root.differences(other).empty());
  CHECK(root.differences(root).empty());
}
