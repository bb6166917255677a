// The image-file store: the persistent medium behind every mounted cache. Layout in format.h.
// Page runs map to one pread/pwrite for the data and one for the OOB areas; the data area
// is 4 KiB aligned and sparse, so an unwritten chip costs no disk space.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>
#include <vector>

#include "flashdir/file_io.h"
#include "flashdir/size.h"
#include "flashdir/nand/page_store.h"

namespace flashdir {
namespace {

class ImageStore final : public PageStore {
 public:
  ImageStore(std::filesystem::path path, UniqueFd fd, format::ImageHeader header, std::vector<BlockState> blocks,
             ImageAccess access, ImageSpace space)
      : path_(std::move(path)),
        fd_(std::move(fd)),
        header_(header),
        blocks_(std::move(blocks)),
        access_(access),
        space_(space) {}

  const Geometry& geometry() const override { return header_.geometry; }
  bool stores_data() const override { return true; }
  std::string_view backend_name() const override { return "image"; }

  BlockState block_state(BlockNumber block) const override { return blocks_[block.value]; }

  Status set_block_state(BlockNumber block, BlockState state) override {
    FLASHDIR_TRY(check_writable());
    std::uint8_t entry[format::kBlockTableEntrySize];
    format::encode_block_table_entry({state.erase_count, state.next_page}, entry);
    FLASHDIR_TRY(pwrite_all(fd_.get(), entry,
                            header_.layout.block_table_offset + block.value * format::kBlockTableEntrySize,
                            "image block table"));
    blocks_[block.value] = state;
    return Status::ok();
  }

  Status read_pages(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override {
    return read_pages_concurrently(first, count, data, oob);
  }

  // pread needs no lock: the file offset is not used, and the kernel orders it against the
  // writers' pwrite and hole punching (a page changing meanwhile reads as some mix of bytes).
  bool concurrent_reads() const override { return true; }
  Status read_pages_concurrently(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) const override {
    if (!data.empty()) FLASHDIR_TRY(pread_exact(fd_.get(), data, data_offset(first), "image page data"));
    if (!oob.empty()) FLASHDIR_TRY(pread_exact(fd_.get(), oob, oob_offset(first), "image OOB area"));
    (void)count;  // implied by the buffer sizes, which the chip checked
    return Status::ok();
  }

  Status write_pages(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override {
    FLASHDIR_TRY(check_writable());
    if (!data.empty()) FLASHDIR_TRY(pwrite_all(fd_.get(), data, data_offset(first), "image page data"));
    if (!oob.empty()) FLASHDIR_TRY(pwrite_all(fd_.get(), oob, oob_offset(first), "image OOB area"));
    (void)count;
    return Status::ok();
  }

  Status discard_block(BlockNumber block) override {
    FLASHDIR_TRY(check_writable());
    const Geometry& g = geometry();
    // The OOB records go for good: a program the process does not finish claims its pages in
    // the block table first, and they must then fail verification (zeros), never show a record
    // from before this erase.
    const std::vector<std::uint8_t> zeros(std::size_t{g.pages_per_block} * g.oob_size_bytes, 0);
    FLASHDIR_TRY(pwrite_all(fd_.get(), zeros, oob_offset(g.first_page(block)), "image OOB area"));
    // Hole punching only gives the space back: a sparse image does (a file system without it
    // keeps the bytes, which the chip never returns: erased pages read as 0xFF by the write
    // pointer); a reserved one keeps its space, so that no later program meets a full disk.
    if (space_ == ImageSpace::sparse &&
        ::fallocate(fd_.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                    static_cast<off_t>(data_offset(g.first_page(block))),
                    static_cast<off_t>(g.block_size_bytes())) != 0 &&
        errno != EOPNOTSUPP) {
      return errno_status(fmt::format("punching block {} of {}", block.value, path_.string()));
    }
    return Status::ok();
  }

  Status sync() override {
    if (access_ == ImageAccess::read_only) return Status::ok();
    if (::fdatasync(fd_.get()) != 0) return errno_status(fmt::format("syncing {}", path_.string()));
    return Status::ok();
  }

 private:
  Status check_writable() const {
    if (access_ == ImageAccess::read_write) return Status::ok();
    return Status::invalid_argument(fmt::format("{} is open read-only", path_.string()));
  }
  std::uint64_t data_offset(Ppn page) const {
    return header_.layout.data_offset + page.value * geometry().page_size_bytes;
  }
  std::uint64_t oob_offset(Ppn page) const {
    return header_.layout.oob_offset + page.value * geometry().oob_size_bytes;
  }

  std::filesystem::path path_;
  UniqueFd fd_;
  format::ImageHeader header_;
  std::vector<BlockState> blocks_;
  ImageAccess access_;
  const ImageSpace space_;
};

Result<UniqueFd> open_locked(const std::filesystem::path& path, int flags, ImageAccess access) {
  // Never through a link (a cache directory holds none), and private to its owner: the image
  // holds copies of files the backing directory may protect.
  UniqueFd fd(::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return errno_status(fmt::format("opening image {}", path.string()));
  const int lock = access == ImageAccess::read_write ? LOCK_EX : LOCK_SH;
  if (::flock(fd.get(), lock | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Status::io_error(fmt::format("image {} is in use by another process", path.string()));
    }
    return errno_status(fmt::format("locking image {}", path.string()));
  }
  return fd;
}

Result<format::ImageHeader> read_header(int fd, const std::filesystem::path& path) {
  std::vector<std::uint8_t> bytes(format::kImageHeaderSize);
  if (Status s = pread_exact(fd, bytes, 0, "image header"); !s.is_ok()) return s.with_context(path.string());
  auto header = format::decode_image_header(bytes);
  if (!header.is_ok()) return header.status().with_context(path.string());
  return header;
}

// The image's blocks are allocated now (unwritten extents: no zeros are written), so that the chip
// never meets a full file system later: a program that fails there would stop the cache in the
// middle of a write. A file system that cannot allocate ahead (no fallocate) keeps a sparse image.
Status reserve_space(int fd, const std::filesystem::path& path, std::uint64_t size_bytes) {
  // Measured first: a fallocate that fails with ENOSPC may have taken what was free meanwhile.
  struct statvfs fs {};
  if (::fstatvfs(fd, &fs) != 0) return errno_status(fmt::format("statvfs of {}", path.string()));
  const std::uint64_t free_bytes = std::uint64_t{fs.f_bavail} * fs.f_frsize;
  if (free_bytes >= size_bytes && ::fallocate(fd, 0, 0, static_cast<off_t>(size_bytes)) == 0) return Status::ok();
  if (free_bytes >= size_bytes && errno == EOPNOTSUPP) return Status::ok();
  if (free_bytes >= size_bytes && errno != ENOSPC)
    return errno_status(fmt::format("reserving {} for image {}", format_size(size_bytes), path.string()));
  return Status::no_space(fmt::format(
      "the image {} needs {} and its file system has {} free: choose a smaller --size (or size=) or another "
      "place for the cache",
      path.string(), format_size(size_bytes), format_size(free_bytes)));
}

}  // namespace

Result<std::shared_ptr<PageStore>> create_image_store(const std::filesystem::path& path, const Geometry& geometry,
                                                      const format::Uuid& uuid, ImageSpace space) {
  FLASHDIR_TRY(geometry.validate());
  auto fd = open_locked(path, O_RDWR | O_CREAT | O_EXCL, ImageAccess::read_write);
  if (!fd.is_ok()) return fd.status();
  format::ImageHeader header{uuid, geometry, format::image_layout(geometry)};
  std::vector<std::uint8_t> bytes(format::kImageHeaderSize);
  format::encode_image_header(header, bytes);
  // A zero block table (erase count 0, nothing programmed) is an erased chip: the rest of the
  // file reads as zeros whether it is allocated or a hole.
  FLASHDIR_TRY(pwrite_all(fd->get(), bytes, 0, "image header"));
  if (space == ImageSpace::reserved) FLASHDIR_TRY(reserve_space(fd->get(), path, header.layout.file_size));
  if (::ftruncate(fd->get(), static_cast<off_t>(header.layout.file_size)) != 0) {
    return errno_status(fmt::format("sizing image {} to {} bytes", path.string(), header.layout.file_size));
  }
  if (::fdatasync(fd->get()) != 0) return errno_status(fmt::format("syncing {}", path.string()));
  std::vector<BlockState> blocks(geometry.block_count);
  return std::shared_ptr<PageStore>(
      std::make_shared<ImageStore>(path, std::move(fd).value(), header, std::move(blocks), ImageAccess::read_write, space));
}

Result<std::shared_ptr<PageStore>> open_image_store(const std::filesystem::path& path, ImageAccess access) {
  auto fd = open_locked(path, access == ImageAccess::read_write ? O_RDWR : O_RDONLY, access);
  if (!fd.is_ok()) return fd.status();
  auto header = read_header(fd->get(), path);
  if (!header.is_ok()) return header.status();
  const Geometry& g = header->geometry;

  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return errno_status(fmt::format("stat of {}", path.string()));
  if (static_cast<std::uint64_t>(st.st_size) != header->layout.file_size) {
    return Status::corruption(fmt::format("image {} is {} bytes but its geometry ({}) needs {} bytes", path.string(),
                                          st.st_size, g.describe(), header->layout.file_size));
  }

  std::vector<std::uint8_t> table(g.block_count * format::kBlockTableEntrySize);
  FLASHDIR_TRY(pread_exact(fd->get(), table, header->layout.block_table_offset, "image block table"));
  std::vector<BlockState> blocks(g.block_count);
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    const auto entry = format::decode_block_table_entry(
        ConstByteSpan(table).subspan(b * format::kBlockTableEntrySize, format::kBlockTableEntrySize));
    if (entry.next_page > g.pages_per_block) {
      return Status::corruption(fmt::format("image {} block table: block {} claims {} programmed pages of {}",
                                            path.string(), b, entry.next_page, g.pages_per_block));
    }
    blocks[b] = {entry.erase_count, entry.next_page};
  }
  // An image allocated in full was reserved when it was made (the space is never given back);
  // one with holes is sparse.
  const bool allocated = static_cast<std::uint64_t>(st.st_blocks) * 512 >= static_cast<std::uint64_t>(st.st_size);
  return std::shared_ptr<PageStore>(std::make_shared<ImageStore>(path, std::move(fd).value(), header.value(),
                                                                 std::move(blocks), access,
                                                                 allocated ? ImageSpace::reserved : ImageSpace::sparse));
}

Result<format::ImageHeader> read_image_header(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno_status(fmt::format("opening image {}", path.string()));
  return read_header(fd.get(), path);
}

}  // namespace flashdir
