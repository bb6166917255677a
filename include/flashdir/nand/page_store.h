// The medium under a SimulatedChip: page bytes, OOB bytes and per-block state (erase count and
// how many pages of the block hold charge). A store only stores; the chip's rules live in
// SimulatedChip, which checks every request before it reaches the store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "flashdir/format.h"
#include "flashdir/geometry.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir {

struct BlockState {
  std::uint32_t erase_count = 0;
  std::uint32_t next_page = 0;  // pages [0, next_page) hold charge
};

class PageStore {
 public:
  virtual ~PageStore() = default;

  virtual const Geometry& geometry() const = 0;
  virtual bool stores_data() const = 0;
  virtual std::string_view backend_name() const = 0;

  virtual BlockState block_state(BlockNumber block) const = 0;
  // Recorded before the pages it describes are written (see format.h, block table).
  virtual Status set_block_state(BlockNumber block, BlockState state) = 0;

  // Raw page access; the caller has checked ranges and sizes. Empty spans are skipped.
  virtual Status read_pages(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) = 0;
  virtual Status write_pages(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) = 0;
  // read_pages() for a caller that does not hold the chip owner's serialisation: it may run
  // while other threads write and discard other pages (what it reads of a page being written
  // or discarded meanwhile is undefined bytes, never undefined behaviour). Only stores whose
  // concurrent_reads() is true serve it; the others refuse.
  virtual bool concurrent_reads() const { return false; }
  virtual Status read_pages_concurrently(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) const;
  // Releases the storage of a block being erased (hole punching for images); afterwards no page
  // of it holds a valid OOB record, whatever the block table says.
  virtual Status discard_block(BlockNumber block) = 0;
  virtual Status sync() = 0;
};

// Page data and OOB in RAM; lost with the process. Shared ownership lets a test "reopen" the
// same medium with a new chip after a simulated power cut.
std::shared_ptr<PageStore> make_memory_store(const Geometry& geometry);
// OOB and block state for every page, data only for pages programmed with a data buffer;
// for fast trace replay, where host pages are programmed without data and read as zeros.
std::shared_ptr<PageStore> make_metadata_store(const Geometry& geometry);

enum class ImageAccess { read_only, read_write };

// How an image takes its space: all of it when it is made, or as its pages are written.
enum class ImageSpace {
  reserved,  // fallocate: a chip that does not fit is refused, and the chip never meets ENOSPC
  sparse,    // a hole until written: for experiments with chips larger than their disk
};

// Creates an image file (refused if the path exists) holding an erased chip. Reserved (where the
// file system can fallocate): refused with no_space, naming what is free, if the chip does not fit.
Result<std::shared_ptr<PageStore>> create_image_store(const std::filesystem::path& path, const Geometry& geometry,
                                                      const format::Uuid& uuid, ImageSpace space = ImageSpace::reserved);
// Opens an image, refusing a bad or corrupt header, a wrong file size and an impossible block
// table, each with a message naming the file and the check. Takes an advisory lock (exclusive
// for read_write, shared for read_only) so two processes never drive one chip.
Result<std::shared_ptr<PageStore>> open_image_store(const std::filesystem::path& path, ImageAccess access);
// The header of an image (for fsck and tools that pair it with a superblock).
Result<format::ImageHeader> read_image_header(const std::filesystem::path& path);

}  // namespace flashdir
