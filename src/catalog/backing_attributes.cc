// The comparisons behind the identity rule (doc/daemon.md "File identity").
#include <fmt/format.h>

#include "flashdir/catalog.h"

namespace flashdir {
namespace {

// Birth times prove only where both files have one (a file system without them gives 0).
bool same_birth(std::int64_t a, std::int64_t b) { return a == 0 || b == 0 || a == b; }

}  // namespace

bool BackingAttributes::same_inode(const BackingAttributes& other) const {
  return device == other.device && inode == other.inode && same_birth(birth_ns, other.birth_ns);
}

bool BackingAttributes::proves_same_file(const BackingAttributes& now, IdentityRule rule) const {
  // The owner under either rule: whatever else someone arranges, a file he puts at the path is his.
  if (uid != now.uid || gid != now.gid) return false;
  return rule == IdentityRule::path || same_inode(now);
}

bool BackingAttributes::same_contents_and_owner(const BackingAttributes& other) const {
  return birth_ns == other.birth_ns && uid == other.uid && gid == other.gid && size_bytes == other.size_bytes &&
         mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns;
}

bool BackingAttributes::same_file_and_contents(const BackingAttributes& other) const {
  return device == other.device && inode == other.inode && same_contents_and_owner(other);
}

std::string_view identity_rule_name(IdentityRule rule) { return rule == IdentityRule::inode ? "inode" : "path"; }

Result<IdentityRule> parse_identity_rule(std::string_view text) {
  if (text == "inode") return IdentityRule::inode;
  if (text == "path") return IdentityRule::path;
  return Status::invalid_argument(fmt::format("identity rule '{}': use inode or path", text));
}

std::string BackingRootRecord::differences(const BackingRootRecord& now) const {
  std::string text;
  const auto differ = [&](std::string what) { text += (text.empty() ? "" : ", ") + what; };
  if (path != now.path) differ(fmt::format("path {} is not {}", now.path, path));
  if (fs_type != now.fs_type) differ(fmt::format("file system type {:#x} is not {:#x}", now.fs_type, fs_type));
  if (fs_id != 0 && now.fs_id != 0 && fs_id != now.fs_id)
    differ(fmt::format("file system id {:#x} is not {:#x}", now.fs_id, fs_id));
  if (root_inode != now.root_inode) differ(fmt::format("root inode {} is not {}", now.root_inode, root_inode));
  if (root_birth_ns != 0 && now.root_birth_ns != 0 && root_birth_ns != now.root_birth_ns)
    differ("the directory was made again since (another birth time)");
  return text;
}

}  // namespace flashdir
