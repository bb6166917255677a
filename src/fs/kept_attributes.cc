#include "fs/kept_attributes.h"

#include <utility>

#include "fs/backing_stat.h"

namespace flashdir::fs {

AttributeStamp stamp_attributes(const MountContext& context, Inode& inode) {
  AttributeStamp stamp;
  stamp.changes = inode.attribute_changes();
  stamp.namespace_epoch = context.namespace_changes.load(std::memory_order_acquire);
  stamp.asked_ns = realtime_ns();
  stamp.keepable = context.options.consistency != Consistency::strict && attributes_may_be_kept(inode);
  return stamp;
}

void keep_attributes(const MountContext& context, Inode& inode, const struct stat& st, const AttributeStamp& stamp,
                     const struct statx* opened) {
  // Regular files only: the daemon's reads of a directory or a symlink move its access time.
  if (!stamp.keepable || !S_ISREG(st.st_mode) || !attributes_may_be_kept(inode) ||
      context.namespace_changes.load(std::memory_order_acquire) != stamp.namespace_epoch)
    return inode.drop_kept_unless(st);
  const double bound_seconds = kernel_cache_seconds(context, st, stamp.asked_ns);
  if (bound_seconds <= 0) return inode.drop_kept_unless(st);
  std::optional<struct statx> whole;
  if (opened != nullptr) whole = *opened;
  inode.keep_attributes(
      {st, stamp.asked_ns, stamp.asked_ns + static_cast<std::int64_t>(bound_seconds * 1e9), stamp.namespace_epoch, whole},
      stamp.changes);
}

namespace {

// What is kept for `inode` and how long it still holds, if it does.
std::optional<std::pair<Inode::KeptAttributes, std::int64_t>> still_holding(const MountContext& context, Inode& inode) {
  auto kept = inode.kept_attributes();
  if (!kept || kept->namespace_epoch != context.namespace_changes.load(std::memory_order_acquire)) return std::nullopt;
  if (!attributes_may_be_kept(inode)) return std::nullopt;
  const std::int64_t left_ns = kept->until_ns - realtime_ns();
  if (left_ns <= 0) return std::nullopt;
  return std::pair{std::move(*kept), left_ns};
}

}  // namespace

std::optional<KeptAnswer> kept_answer(const MountContext& context, Inode& inode) {
  auto kept = still_holding(context, inode);
  if (!kept) return std::nullopt;
  return KeptAnswer{kept->first.st, 1e-9 * static_cast<double>(kept->second)};
}

bool open_keeping_the_check(const MountContext& context, Inode& inode) {
  const AttributeStamp stamp = stamp_attributes(context, inode);
  std::optional<struct statx> checked;
  if (!context.inodes->path_fd(inode, &checked).is_ok()) return false;
  if (checked) keep_attributes(context, inode, stat_from_statx(*checked), stamp, &*checked);
  return true;
}

std::optional<struct statx> kept_open_answer(const MountContext& context, Inode& inode) {
  if (context.options.consistency != Consistency::read_mostly) return std::nullopt;
  auto kept = still_holding(context, inode);
  if (!kept) return std::nullopt;
  return kept->first.opened;
}

}  // namespace flashdir::fs
