// fsck -y's repairs of a chip image that belongs to a sound superblock (include/flashdir/cache_dir.h,
// doc/fsck.md "What -y rebuilds"): the header, the file's size and the block table are each
// rebuilt from what the rest of the cache still proves.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>
#include <vector>

#include "flashdir/cache_dir.h"
#include "flashdir/file_io.h"

namespace flashdir {
namespace {

Result<UniqueFd> open_image(const std::filesystem::path& image, int flags) {
  // Never through a link (a cache directory holds none; trusted_dir.h).
  UniqueFd fd(::open(image.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno_status(fmt::format("opening image {}", image.string()));
  return fd;
}

Status sync(int fd, const std::filesystem::path& image) {
  if (::fdatasync(fd) != 0) return errno_status(fmt::format("syncing {}", image.string()));
  return Status::ok();
}

// The number of pages of a block up to the last one whose OOB record decodes: a record is
// written with its page, and an erase zeroes the block's OOB area before it resets the table
// entry, so no record is ever found past the pages the table claims.
std::uint32_t pages_with_records(ConstByteSpan block_oob, const Geometry& g) {
  for (std::uint32_t i = g.pages_per_block; i-- > 0;) {
    if (format::decode_oob(block_oob.subspan(std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes)).is_ok()) return i + 1;
  }
  return 0;
}

}  // namespace

Status rewrite_image_header(const std::filesystem::path& image, const format::Superblock& superblock) {
  auto fd = open_image(image, O_WRONLY);
  if (!fd.is_ok()) return fd.status();
  const format::ImageHeader header{superblock.uuid, superblock.geometry, format::image_layout(superblock.geometry)};
  std::vector<std::uint8_t> bytes(format::kImageHeaderSize);
  format::encode_image_header(header, bytes);
  FLASHDIR_TRY(pwrite_all(fd->get(), bytes, 0, "image header"));
  return sync(fd->get(), image);
}

Result<std::uint64_t> image_file_size(const std::filesystem::path& image) {
  struct stat st {};
  if (::lstat(image.c_str(), &st) != 0) return errno_status(fmt::format("stat of image {}", image.string()));
  return static_cast<std::uint64_t>(st.st_size);
}

Status resize_image(const std::filesystem::path& image, const Geometry& geometry) {
  auto fd = open_image(image, O_WRONLY);
  if (!fd.is_ok()) return fd.status();
  const std::uint64_t size = format::image_layout(geometry).file_size;
  struct stat before {};
  if (::fstat(fd->get(), &before) != 0) return errno_status(fmt::format("stat of image {}", image.string()));
  if (::ftruncate(fd->get(), static_cast<off_t>(size)) != 0)
    return errno_status(fmt::format("sizing image {} to {} bytes", image.string(), size));
  // An image whose space was reserved (allocated in full) gets the space of what it grew by too.
  const bool reserved = static_cast<std::uint64_t>(before.st_blocks) * 512 >= static_cast<std::uint64_t>(before.st_size);
  if (reserved && ::fallocate(fd->get(), 0, 0, static_cast<off_t>(size)) != 0 && errno != EOPNOTSUPP)
    return errno_status(fmt::format("reserving the space of image {} ({} bytes)", image.string(), size));
  return sync(fd->get(), image);
}

Result<std::vector<BlockTableFault>> find_block_table_faults(const std::filesystem::path& image,
                                                            const format::ImageHeader& header) {
  auto fd = open_image(image, O_RDONLY);
  if (!fd.is_ok()) return fd.status();
  const Geometry& g = header.geometry;
  std::vector<std::uint8_t> table(g.block_count * format::kBlockTableEntrySize);
  FLASHDIR_TRY(pread_exact(fd->get(), table, header.layout.block_table_offset, "image block table"));
  std::vector<BlockTableFault> faults;
  std::uint32_t highest_sound_erase_count = 0;
  std::vector<std::uint8_t> oob(std::size_t{g.pages_per_block} * g.oob_size_bytes);
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    const format::BlockTableEntry entry = format::decode_block_table_entry(
        ConstByteSpan(table).subspan(b * format::kBlockTableEntrySize, format::kBlockTableEntrySize));
    FLASHDIR_TRY(pread_exact(fd->get(), oob, header.layout.oob_offset + b * oob.size(), "image OOB area"));
    const std::uint32_t programmed = pages_with_records(oob, g);
    if (entry.next_page <= g.pages_per_block && programmed <= entry.next_page) {
      highest_sound_erase_count = std::max(highest_sound_erase_count, entry.erase_count);
      continue;
    }
    faults.push_back({b, entry, {entry.erase_count, programmed}});
  }
  // An entry with an impossible page count is noise, its erase count perhaps too: it gets one no
  // higher than a sound entry's (erase counts only steer wear levelling).
  for (BlockTableFault& fault : faults) {
    if (fault.recorded.next_page > g.pages_per_block)
      fault.rebuilt.erase_count = std::min(fault.rebuilt.erase_count, highest_sound_erase_count);
  }
  return faults;
}

Status rewrite_block_table(const std::filesystem::path& image, const format::ImageHeader& header,
                           const std::vector<BlockTableFault>& faults) {
  auto fd = open_image(image, O_WRONLY);
  if (!fd.is_ok()) return fd.status();
  for (const BlockTableFault& fault : faults) {
    std::uint8_t entry[format::kBlockTableEntrySize];
    format::encode_block_table_entry(fault.rebuilt, entry);
    FLASHDIR_TRY(pwrite_all(fd->get(), entry, header.layout.block_table_offset + fault.block * format::kBlockTableEntrySize,
                            "image block table"));
  }
  return sync(fd->get(), image);
}

}  // namespace flashdir
