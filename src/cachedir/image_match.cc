// Whether a chip image belongs to its superblock (include/flashdir/cache_dir.h).
#include <fmt/format.h>

#include "flashdir/cache_dir.h"

namespace flashdir {

Status check_image_matches(const std::filesystem::path& image, const format::ImageHeader& header,
                           const format::Superblock& superblock) {
  if (header.uuid != superblock.uuid) {
    return Status::invalid_argument(fmt::format("image {} belongs to cache {}, the superblock to {}", image.string(),
                                                header.uuid.to_string(), superblock.uuid.to_string()));
  }
  const Geometry& a = header.geometry;
  const Geometry& b = superblock.geometry;
  const struct {
    const char* field;
    std::uint64_t image_value, superblock_value;
  } fields[] = {{"page size", a.page_size_bytes, b.page_size_bytes},
                {"OOB size", a.oob_size_bytes, b.oob_size_bytes},
                {"pages per block", a.pages_per_block, b.pages_per_block},
                {"block count", a.block_count, b.block_count}};
  for (const auto& f : fields) {
    if (f.image_value == f.superblock_value) continue;
    return Status::invalid_argument(fmt::format(
        "{} differs: image {} has {}, the superblock {} (image geometry ({}) differs from the superblock's ({}))",
        f.field, image.string(), f.image_value, f.superblock_value, a.describe(), b.describe()));
  }
  return Status::ok();
}

}  // namespace flashdir
